package schemaguard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestMeasureSchema(t *testing.T) {
	lim := schemaLimits{maxCost: 1000, maxNodes: 100, maxDepth: 10}
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range n {
			fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
		}
		fmt.Fprintf(&b, `"d%d":true}}`, n)
		return b.String()
	}
	tests := []struct {
		name      string
		schema    string
		cost      int64
		recursive bool
		err       string
	}{
		{"leaf", `{"type":"string"}`, 1, false, ""},
		{"properties", `{"properties":{"a":{"type":"string"},"b":{}}}`, 3, false, ""},
		{"property named like a keyword", `{"properties":{"enum":{"allOf":[{},{}]},"default":{}}}`, 5, false, ""},
		{"data is not a schema", `{"enum":[{"allOf":[{},{}]}],"default":{"properties":{}}}`, 1, false, ""},
		{"defs unused", `{"$defs":{"a":{"allOf":[{},{}]}}}`, 1, false, ""},
		{"chain of 5", chain(5), 126, false, ""}, // d5=1, d(i)=1+2*(1+d(i+1)): d0=125, +1 for the root
		{"chain of 20", chain(20), 0, false, "over the budget of 1000"},
		{"anchor ref", `{"$defs":{"a":{"$anchor":"A","type":"string"}},"properties":{"x":{"$ref":"#A"},"y":{"$ref":"#A"}}}`, 5, false, ""},
		{"id ref", `{"$id":"https://x.example/root","$defs":{"a":{"$id":"a.json","type":"string"}},"properties":{"x":{"$ref":"a.json"}}}`, 3, false, ""},
		{"tree", `{"$defs":{"n":{"properties":{"k":{"items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, 0, true, ""},
		{"too many nodes", `{"properties":{` + strings.Repeat(`"a":{},`, 0) + props(150) + `}}`, 0, false, "more than 100 subschemas"},
		{"too deep", strings.Repeat(`{"not":`, 12) + `{}` + strings.Repeat(`}`, 12), 0, false, "nest more than 10 levels"},
		{"external ref", `{"$ref":"https://example.com/s.json"}`, 0, false, "cannot be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			dec := json.NewDecoder(strings.NewReader(tt.schema))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			st, err := measureSchema(doc, lim)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.cost != 0 && st.cost != tt.cost {
				t.Errorf("cost = %d, want %d", st.cost, tt.cost)
			}
			if st.recursive != tt.recursive {
				t.Errorf("recursive = %v, want %v", st.recursive, tt.recursive)
			}
		})
	}
}

func props(n int) string {
	var p []string
	for i := range n {
		p = append(p, fmt.Sprintf(`"p%d":{}`, i))
	}
	return strings.Join(p, ",")
}

// measureSchema runs on every schema a server sends: it must never panic, and its work must
// stay linear (the fuzz engine's per-input timeout catches blow-ups).
func FuzzMeasureSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"allOf":[{"$ref":"#"},{"$ref":"#/$defs/x"}]}}}`,
		`{"$id":"http://a/b","$defs":{"c":{"$id":"c","$anchor":"z"}},"$ref":"c#z"}`,
		`{"$dynamicAnchor":"m","$dynamicRef":"#m","items":[{"$ref":"#/items/0"}]}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"#x","$ref":"#x"}`,
		`{"$ref":"#/%7E0"}`, `true`, `[]`, `{"$ref":"::"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var doc any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&doc) != nil {
			return
		}
		st, err := measureSchema(doc, schemaLimits{maxCost: 10_000, maxNodes: 500, maxDepth: 32})
		if err == nil && st.cost > 10_000 {
			t.Fatalf("cost %d over the budget without an error", st.cost)
		}
	})
}
