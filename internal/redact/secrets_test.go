package redact

import (
	"slices"
	"testing"
)

func TestHeaderSecrets(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"Bearer tok-123", []string{"Bearer tok-123", "tok-123"}},
		{"  Token abc  ", []string{"Token abc", "abc"}},
		{"Basic dXNlcjpwYXNzd29yZA==", []string{"Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "user:password", "password"}},
		{"plain-key", []string{"plain-key"}},
		{"a:b c", []string{"a:b c"}}, // not a scheme
	}
	for _, tt := range tests {
		if got := HeaderSecrets(tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("HeaderSecrets(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// Environment and header values: every value of a credential-like name, others from
// MinEnvSecretLen bytes.
func TestConfigSecrets(t *testing.T) {
	got := ConfigSecrets("https://u:pw-123@h/mcp?k=query-value",
		map[string]string{"Authorization": "Bearer tok", "X-Client": "mcphost", "X-Trace": "long-trace-value"},
		map[string]string{"API_KEY": "k1x", "LEVEL": "info", "SERVICE": "plain-but-long", "QUOTE": `a"quoted"value`},
		[]string{"--token", "arg-tok"})
	for _, want := range []string{"pw-123", "query-value", "Bearer tok", "tok", "long-trace-value", "k1x", "plain-but-long",
		`a"quoted"value`, `a\"quoted\"value`, "arg-tok"} {
		if !slices.Contains(got, want) {
			t.Errorf("ConfigSecrets lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"mcphost", "info"} {
		if slices.Contains(got, not) {
			t.Errorf("ConfigSecrets holds the short setting %q: %q", not, got)
		}
	}
}
