package eino

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A server's inputSchema is untrusted: convertSchema must never panic, and what it makes
// must write out as JSON that converts again to the same JSON (nothing is lost on a
// second pass, so nothing but keyword order was lost on the first).
func FuzzConvertSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"b":{"type":"integer","maximum":1e400},"a":{"enum":[1,"x",null]}},"required":["b"]}`,
		`{"definitions":{"p":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/p"}},"items":[true,false],"exclusiveMaximum":true}`,
		`{"anyOf":[{"const":null},{"not":{}}],"$defs":{"a":{"items":{"items":{}}}},"patternProperties":{"^x":false}}`,
		`{"type":["string","null"],"minLength":"3","x-a":{"b":[1,2]},"default":{"a":1}}`,
		`true`, `{}`, `[]`, `{"properties":[]}`, `{"type":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		s, err := convertSchema(in)
		if err != nil {
			return
		}
		once, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: converted schema does not marshal: %v", in, err)
		}
		s2, err := convertSchema(once)
		if err != nil {
			t.Fatalf("%s: its output %s does not convert: %v", in, once, err)
		}
		twice, err := json.Marshal(s2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("%s: second pass changed it:\n%s\n%s (%v)", in, once, twice, err)
		}
	})
}
