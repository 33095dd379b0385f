package bridge

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://h/mcp", "https://h/mcp"},
		{"https://user:pw@h/mcp?token=abc&x=1#frag", "https://***@h/mcp?token=***&x=***"},
		{"http://h:8080/sse?key=s3cr3t", "http://h:8080/sse?key=***"},
		{"http://[::1]/x", "http://[::1]/x"},
		{"::not a url", "***"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestServerConfigNeverPrintsSecrets(t *testing.T) {
	cfgs := []ServerConfig{
		{ID: "a", Command: "srv", Args: []string{"--x"}, Env: map[string]string{"TOKEN": "env-secret"}},
		{ID: "b", URL: "https://u:pass-secret@h/mcp?k=query-secret", Headers: map[string]string{"Authorization": "Bearer hdr-secret"}},
	}
	for _, c := range cfgs {
		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("cfg", "server", c)
		out := fmt.Sprintf("%v %+v %#v %s", c, c, c, c) + b.String()
		for _, secret := range []string{"env-secret", "pass-secret", "query-secret", "hdr-secret"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s leaked in %s", secret, out)
			}
		}
		if !strings.Contains(out, c.ID) {
			t.Errorf("output does not name the server: %s", out)
		}
	}
}
