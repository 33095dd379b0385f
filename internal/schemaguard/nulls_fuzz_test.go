package schemaguard

import (
	"bytes"
	"encoding/json"
	"testing"
)

const nullsSchema = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":["string","null"]},"c":{"type":"string"}},"required":["c"]}`

// Dropping keeps the other members' bytes and order.
func TestDropNullsKeepsBytes(t *testing.T) {
	p := &NullPolicy{}
	for in, want := range map[string]string{
		`{"z":{"k":[1,null]},"a":null,"c":"x<&>"}`: `{"z":{"k":[1,null]},"c":"x<&>"}`,
		`{ "c" : 1e400 , "a" : null }`:             `{"c":1e400}`,
		`{"a":null}`:                               `{}`,
		`{"b":null,"a":1}`:                         `{"b":null,"a":1}`,
		`{"c":"null"}`:                             `{"c":"null"}`,
	} {
		got, _ := p.Drop(json.RawMessage(nullsSchema), json.RawMessage(in))
		if string(got) != want && !(want == in && string(got) == in) {
			t.Errorf("dropNulls(%s) = %s, want %s", in, got, want)
		}
	}
}

func FuzzDropNulls(f *testing.F) {
	for _, s := range []string{`{"a":null,"c":"x"}`, `{"a":1}`, `{}`, `{"a":null,"a":null}`, `{"\u0061":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) || !bytes.HasPrefix(bytes.TrimSpace([]byte(in)), []byte("{")) {
			return
		}
		p := &NullPolicy{}
		out, dropped := p.Drop(json.RawMessage(nullsSchema), json.RawMessage(bytes.TrimSpace([]byte(in))))
		if !json.Valid(out) {
			t.Fatalf("dropNulls(%s) = %s: not JSON", in, out)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("dropNulls(%s) = %s: %v", in, out, err)
		}
		for _, d := range dropped {
			if v, ok := m[d]; ok && string(v) == "null" && d == "a" {
				t.Fatalf("dropNulls(%s) = %s: %q still null", in, out, d)
			}
		}
	})
}
