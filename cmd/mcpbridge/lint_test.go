package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

func TestLintSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []string // substrings, one per finding, in order
	}{
		{name: "fine", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "no type", schema: `{"properties":{}}`, want: []string{`no top-level "type"`}},
		{name: "type string", schema: `{"type":"string"}`, want: []string{`top-level "type" is "string", not "object"`}},
		{name: "type list", schema: `{"type":["object","null"],"properties":{}}`, want: []string{`top-level "type" is ["object","null"]`}},
		{name: "no properties", schema: `{"type":"object","additionalProperties":false}`, want: []string{`without "properties": OpenAI rejects it`}},
		{name: "top-level oneOf", schema: `{"type":"object","properties":{},"oneOf":[{},{}]}`, want: []string{`top-level "oneOf": OpenAI rejects`}},
		{name: "top-level allOf and not", schema: `{"type":"object","properties":{},"allOf":[{}],"not":{}}`, want: []string{`top-level "allOf"`, `top-level "not"`}},
		{name: "nested anyOf is fine", schema: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`},
		{name: "external ref", schema: `{"type":"object","properties":{"a":{"$ref":"https://u:p@x.example/s.json?k=v"}}}`,
			want: []string{`"$ref" at /properties/a points outside the schema (https://`}},
		{name: "relative ref", schema: `{"type":"object","properties":{"a":{"items":[{"$ref":"other.json"}]}}}`,
			want: []string{`"$ref" at /properties/a/items/0 points outside`}},
		{name: "local ref", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"}}}`,
			want: []string{`uses "$ref"/"$defs": Gemini`}},
		{name: "escaped pointer", schema: `{"type":"object","properties":{"a/b~":{"$ref":"x.json"}}}`, want: []string{`/properties/a~1b~0 points`}},
		{name: "not an object", schema: `[1]`, want: []string{"not a JSON object"}},
		{name: "not json", schema: `{`, want: []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lintSchema(json.RawMessage(tt.schema))
			if len(got) != len(tt.want) {
				t.Fatalf("lintSchema(%s) = %q, want %d findings like %q", tt.schema, got, len(tt.want), tt.want)
			}
			for i := range got {
				if strings.Contains(got[i], "u:p@") || strings.Contains(got[i], "k=v") {
					t.Errorf("lintSchema(%s)[%d] = %q shows URL credentials or query values", tt.schema, i, got[i])
				}
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("lintSchema(%s)[%d] = %q, want it to contain %q", tt.schema, i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestLintToolCapsFindings(t *testing.T) {
	var props []string
	for i := range 20 {
		props = append(props, `"p`+string(rune('a'+i))+`":{"$ref":"http://x/`+string(rune('a'+i))+`"}`)
	}
	tool := bridge.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)}
	got := lintTool(tool)
	if len(got) != maxLintFindings+1 || !strings.HasPrefix(got[maxLintFindings], "… and ") {
		t.Errorf("lintTool with 20 findings = %d lines (last %q), want %d plus a summary", len(got), got[len(got)-1], maxLintFindings)
	}
}

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

// FuzzLintSchema feeds arbitrary server schemas to the lint and the parameter summary: they
// must not panic, and must terminate on deep nesting.
func FuzzLintSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{}}}`,
		`{"anyOf":[{"$ref":"https://x"}],"properties":[1,2]}`,
		`{"type":"object","properties":{"a":{"type":["string",1]}},"required":[1]}`,
		`[[[[[[{"$ref":5}]]]]]]`,
		strings.Repeat(`{"a":`, 200) + `{"$ref":"x"}` + strings.Repeat(`}`, 200),
		`null`, `"x"`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = lintTool(bridge.Tool{Name: "fuzz", Parameters: json.RawMessage(s)})
		_ = paramSummary(json.RawMessage(s))
	})
}
