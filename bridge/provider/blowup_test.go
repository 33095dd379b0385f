package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// blowupSchema has definitions that each reference the next one many times: inlining it
// naively would make width^depth copies.
func blowupSchema(width, depth int) json.RawMessage {
	var defs []string
	for d := range depth {
		var props []string
		for w := range width {
			props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/d%d"}`, w, d+1))
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{%s}}`, d, strings.Join(props, ",")))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, depth))
	return json.RawMessage(`{"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`)
}

// Inlining is bounded: a schema that would expand exponentially is left with its
// references, and the finding stays.
func TestInlineIsBounded(t *testing.T) {
	a, err := Adapt(blowupSchema(30, 12), Gemini)
	if err != nil {
		t.Fatal(err)
	}
	if find(a.Remaining, RuleLocalRef) == nil {
		t.Errorf("remaining = %v, want the $ref finding kept", a.Remaining)
	}
	if !strings.Contains(strings.Join(a.Changes, " "), "references left in place") {
		t.Errorf("changes = %v, want the size bound named", a.Changes)
	}
}

func BenchmarkAdaptBlowup(b *testing.B) {
	s := blowupSchema(30, 12)
	for b.Loop() {
		_, _ = Adapt(s, GeminiParameters)
	}
}
