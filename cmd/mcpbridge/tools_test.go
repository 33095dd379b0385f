package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParamSummary(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":["integer","null"]}},"required":["a"]}`, "z: string, a: integer|null (required)"},
		{`{"type":"object","properties":{}}`, "none"},
		{`{"type":"object"}`, "none"},
		{`{"type":"object","properties":{"r":{"$ref":"#/x"}}}`, "r"},
	}
	for _, tt := range tests {
		if got := paramSummary(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("paramSummary(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

// FuzzParamSummary feeds arbitrary server schemas to the parameter summary: it must not
// panic, and must terminate on deep nesting. (The provider lint has its own fuzz test in
// bridge/provider.)
func FuzzParamSummary(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":["string",1]}},"required":[1]}`,
		strings.Repeat(`{"properties":`, 200) + `{}` + strings.Repeat(`}`, 200),
		`null`, `"x"`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = paramSummary(json.RawMessage(s))
	})
}
