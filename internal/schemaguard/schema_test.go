package schemaguard

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{`{"type":"object"}`, `{"type":"object","properties":{}}`, ""},
		{` {"type" : "object"} `, `{"type" : "object","properties":{}}`, ""},
		{`{"type":"object","properties":{"a":{}}}`, `{"type":"object","properties":{"a":{}}}`, ""},
		{`{"anyOf":[{"type":"object"}]}`, `{"anyOf":[{"type":"object"}]}`, ""},
		{`{}`, `{}`, ""},
		{`[]`, "", "not a JSON object"},
		{`"object"`, "", "not a JSON object"},
		{`{"type":`, "", "not valid JSON"},
		{``, "", "missing"},
	}
	for _, tt := range tests {
		got, err := CheckSchema(json.RawMessage(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CheckSchema(%s) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("CheckSchema(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeArgs(t *testing.T) {
	for _, in := range []string{"", "null", `""`, "  ", " null "} {
		got, err := NormalizeArgs(json.RawMessage(in))
		if err != nil || string(got) != "{}" {
			t.Errorf("NormalizeArgs(%q) = %s, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{`[1]`: "an array", `1`: "a number", `true`: "a boolean", `"x"`: "a string", `{`: "not valid JSON", `{"a":1}x`: "not valid JSON"} {
		if _, err := NormalizeArgs(json.RawMessage(in)); !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), want) {
			t.Errorf("NormalizeArgs(%s) = %v, want %q", in, err, want)
		}
	}
}

// Each draft the schema names is honoured; 2020-12 is the default.
func TestValidateDrafts(t *testing.T) {
	tests := []struct {
		draft, schema, good, bad, want string
	}{
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","maximum":5,"exclusiveMaximum":true}}}`,
			`{"n":4}`, `{"n":5}`, "at /n"},
		{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"n":{"exclusiveMaximum":5}}}`,
			`{"n":4}`, `{"n":5}`, "exclusiveMaximum"},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"if":{"const":"a"},"then":{"minLength":2}}}}`,
			`{"s":"b"}`, `{"s":"a"}`, "at /s"},
		{"2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","$defs":{"p":{"type":"integer"}},"properties":{"p":{"$ref":"#/$defs/p"}},"unevaluatedProperties":false}`,
			`{"p":1}`, `{"p":1,"q":2}`, "unevaluatedProperties"},
		{"2020-12 default", `{"type":"object","prefixItems":[{"type":"string"}],"properties":{"l":{"prefixItems":[{"type":"string"}]}}}`,
			`{"l":["x"]}`, `{"l":[1]}`, "at /l/0"},
	}
	for _, tt := range tests {
		t.Run(tt.draft, func(t *testing.T) {
			sch, err := Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateArgs(sch, json.RawMessage(tt.good)); err != nil {
				t.Errorf("good %s: %v", tt.good, err)
			}
			err = ValidateArgs(sch, json.RawMessage(tt.bad))
			if !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("bad %s: %v, want %q", tt.bad, err, tt.want)
			}
		})
	}
}

// A server's schema must never make the client read a file or fetch a URL. The referenced
// file here would reject every argument if it were read; compiling must fail instead, and
// with validation off for that tool the arguments pass.
func TestExternalRefIsRefused(t *testing.T) {
	dir := t.TempDir()
	ext := filepath.Join(dir, "ext.json")
	if err := os.WriteFile(ext, []byte(`{"not":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + filepath.ToSlash(ext), ext, "http://127.0.0.1:1/schema.json", "ext.json"} {
		schema := `{"type":"object","properties":{"a":{"$ref":` + jsonString(ref) + `}}}`
		sch, err := Compile(json.RawMessage(schema))
		if err != nil {
			if !strings.Contains(err.Error(), "refused") {
				t.Errorf("$ref %s: compile err = %v, want a refusal", ref, err)
			}
			continue
		}
		// A relative reference resolves against the schema's own (non-file) URI, never the
		// file system: the file's "not":{} would reject every value.
		if err := ValidateArgs(sch, json.RawMessage(`{"a":{}}`)); err != nil {
			t.Errorf("$ref %s: the external file was applied: %v", ref, err)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
