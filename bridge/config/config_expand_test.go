package config

import (
	"errors"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	env := mapEnv(map[string]string{"HOME": "/home/u", "EMPTY": "", "TOKEN": "t0k", "B": "bee"})
	tests := []struct {
		in, want string
		err      string // substring; "" means success
	}{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "${HOME}/data", want: "/home/u/data"},
		{in: "a${HOME}b${TOKEN}c", want: "a/home/ubt0kc"},
		{in: "${env:HOME}", want: "/home/u"},
		{in: "${env://HOME}", want: "/home/u"},
		{in: "${env://NOPE:-/tmp}", want: "/tmp"},
		{in: "${env:NOPE:-d}", want: "d"},
		{in: "${NOPE:-}", want: ""},
		{in: "${NOPE:-a:-b}", want: "a:-b"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${EMPTY}", want: ""},
		{in: "${HOME:-x}", want: "/home/u"},
		{in: "${NOPE:-${B}}", want: "bee"},
		{in: "${NOPE:-${NOPE2:-deep}}!", want: "deep!"},
		{in: "${NOPE:-{x}}", want: "{x}"},
		{in: "$HOME", want: "$HOME"},
		{in: "$$", want: "$$"},
		{in: "$${HOME}", want: "$${HOME}"},
		{in: "cost $5", want: "cost $5"},
		{in: "trailing $", want: "trailing $"},
		{in: "{HOME}", want: "{HOME}"},
		{in: "${NOPE}", err: "${NOPE} is not set"},
		{in: "${env:NOPE}", err: "${env:NOPE} is not set"},
		{in: "${env://NOPE}", err: "${env://NOPE} is not set"},
		{in: "${NOPE:-${ALSO_NOPE}}", err: "${ALSO_NOPE} is not set"},
		{in: "${input:api-key}", err: "${input:api-key} is a VS Code input prompt"},
		{in: "${input:}", err: "malformed ${input:...}"},
		{in: "${HOME", err: `unterminated "${" at byte 0`},
		{in: "x${NOPE:-${B}", err: "unterminated"},
		{in: "${}", err: "malformed variable reference"},
		{in: "${1ABC}", err: "malformed variable reference"},
		{in: "${A B}", err: "malformed variable reference"},
		{in: "${workspaceFolder}", err: "${workspaceFolder} is not set"},
		{in: "${file:/etc/x}", err: "${file:...} references are not supported"},
		{in: strings.Repeat("${A:-", 12) + "x" + strings.Repeat("}", 12), err: "nested too deeply"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, env)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("expand(%q): %v", tt.in, err)
		case tt.err == "" && got != tt.want:
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("expand(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
		}
	}
}

func TestExpandErrorTypes(t *testing.T) {
	t.Parallel()
	_, err := expand("x ${input:tok} y", mapEnv(nil))
	var in *inputVarError
	if !errors.As(err, &in) || in.ID != "tok" {
		t.Errorf("err = %#v, want *inputVarError for tok", err)
	}
	_, err = expand("${A}", mapEnv(nil))
	var unset *unsetVarError
	if !errors.As(err, &unset) || unset.Expr != "${A}" {
		t.Errorf("err = %#v, want *unsetVarError for ${A}", err)
	}
}

// TestExpandNeverPrintsValues checks that errors name variables but hold no values or defaults.
func TestExpandNeverPrintsValues(t *testing.T) {
	t.Parallel()
	env := mapEnv(map[string]string{"S": "value-1"})
	for _, in := range []string{"${S}${NOPE}", "${NOPE:-value-2}${NOPE2}", "${S}${", "${NOPE:-value-2 ${X}", "${S}${input:x}"} {
		_, err := expand(in, env)
		if err == nil {
			t.Errorf("expand(%q): no error", in)
			continue
		}
		if strings.Contains(err.Error(), "value-") {
			t.Errorf("expand(%q) error %q holds a value", in, err)
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-d}", "${env://A:-${B}}", "$$", "${", "${input:x}", "${a:-${b:-${c}}}"} {
		f.Add(s)
	}
	env := func(name string) (string, bool) {
		if strings.HasPrefix(name, "U") {
			return "", false
		}
		return "<" + name + ">", true
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expand(s, env)
		if !strings.Contains(s, "${") && (err != nil || got != s) {
			t.Fatalf("expand(%q) = %q, %v; want it unchanged", s, got, err)
		}
		if err == nil && len(got) > len(s)*(len(s)+2)+16 {
			t.Fatalf("expand(%q) grew to %d bytes", s, len(got))
		}
	})
}
