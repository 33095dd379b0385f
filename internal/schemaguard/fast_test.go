package schemaguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fastSeeds are schemas of the kinds tool servers list: flat objects (go-sdk's inferred
// schemas, zod's), nested ones, and ones just outside the fast subset.
var fastSeeds = []string{
	`{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string","minLength":1,"maxLength":5},"n":{"type":"integer"},"mode":{"type":"string","enum":["a","b"]}},"required":["q"]}`,
	`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},"opt":{"type":["string","null"]},"any":{},"t":true}}`,
	`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer"}},"required":[]}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":3}}}`,
	`{"type":"object","properties":{"s":{"type":"string","format":"email"}}}`,
	`{"type":"object","properties":{"e":{"enum":["x",null,true,"x"]}}}`,
	`{"type":"object","required":["a","a"]}`,
	`{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"object","properties":{"a":{"type":"integer"}},"x-mcp-header":"A"}`,
	`{"type":["object","object"]}`,
	`{"type":"object","properties":{"a":false}}`,
}

var fastValues = []string{
	`{}`, `{"a":40,"b":2}`, `{"a":1.5,"b":-0}`, `{"a":"1","b":2}`, `{"a":1,"b":2,"c":3}`,
	`{"q":"héllo"}`, `{"q":"héllo!"}`, `{"q":""}`, `{"q":"x","n":1.0}`, `{"q":"x","n":10}`, `{"q":"x","mode":"c"}`,
	`{"tags":["a"]}`, `{"tags":[]}`, `{"tags":["a",1]}`, `{"tags":["a","b","c","d"]}`, `{"opt":null}`, `{"opt":1}`,
	`{"o":{"x":true}}`, `{"o":{"x":true,"y":1}}`, `{"o":{}}`, `{"n":2}`, `{"n":3}`, `{"s":"nope"}`,
	`{"e":null}`, `{"e":"y"}`, ` { "a" : 40 , "b" : 2 } `, `{"a":40,"a":"x","b":2}`, `{"q":"h\u00e9"}`, `{"mode":"\u0061","q":"x"}`,
	`{"tags":[ "a" , "b" ]}`, `{"any":[[[[{"x":[1,{"y":"}"}]}]]]],"t":{"a":"]"}}`, `{"o":{"x":false},"q":"x"}`, `[1]`, `"s"`, `3`, `{"a":1e400}`, `{"a":12345678901234567890123}`, `{"any":[{"x":1}],"t":"s"}`,
}

// TestFastAgreesWithJSONSchema: on every seed schema and value, the fast walk accepts only
// what jsonschema accepts, a fast schema always compiles, and Validate's verdict (and error
// message) is jsonschema's.
func TestFastAgreesWithJSONSchema(t *testing.T) {
	fastAccepted := 0
	for _, s := range fastSeeds {
		for _, v := range fastValues {
			if checkFast(t, []byte(s), []byte(v)) {
				fastAccepted++
			}
		}
	}
	if fastAccepted < 20 {
		t.Fatalf("the fast walk accepted only %d seed pairs: is it switched off?", fastAccepted)
	}
}

// TestFastSubset pins which schemas are in the fast subset.
func TestFastSubset(t *testing.T) {
	for _, tc := range []struct {
		schema string
		fast   bool
	}{
		{fastSeeds[0], true},
		{fastSeeds[1], true},
		{fastSeeds[2], true},
		{fastSeeds[3], true},
		{fastSeeds[4], false}, // draft 4 refuses an empty required
		{fastSeeds[5], false}, // minimum: jsonschema's
		{fastSeeds[6], false}, // format: jsonschema's
		{fastSeeds[7], false}, // a repeated enum value
		{fastSeeds[8], false}, // a repeated required name
		{fastSeeds[9], false}, // additionalProperties as a schema
		{fastSeeds[10], true}, // x- keywords are annotations
		{fastSeeds[11], false},
		{fastSeeds[12], false},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"type":"object"}}}`, false},
		{`{"$schema":"http://example.com/mine","type":"object"}`, false},
		{`true`, true},
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.schema)))
		if err != nil {
			t.Fatal(err)
		}
		if got := compileFast(doc) != nil; got != tc.fast {
			t.Errorf("compileFast(%s) fast = %v, want %v", tc.schema, got, tc.fast)
		}
	}
}

// TestFastSkipsCompiling: a valid value against a fast schema is accepted without
// compiling the schema; an invalid one compiles it and gets jsonschema's message.
func TestFastSkipsCompiling(t *testing.T) {
	var c Cache
	l, problem := c.Schema(context.Background(), json.RawMessage(fastSeeds[0]), "inputSchema", Limits{MaxCost: 10000, MaxNodes: 1000})
	if l == nil {
		t.Fatal(problem)
	}
	if err := l.ValidateJSON(context.Background(), json.RawMessage(`{"a":40,"b":2}`)); err != nil {
		t.Fatal(err)
	}
	if l.Compiled() {
		t.Fatal("a valid value against a fast schema compiled the schema")
	}
	err := l.ValidateJSON(context.Background(), json.RawMessage(`{"a":"x","b":2}`))
	if err == nil || !l.Compiled() {
		t.Fatalf("invalid value: err %v, compiled %v", err, l.Compiled())
	}
}

// checkFast checks one schema/value pair and reports whether the fast walk accepted it.
func checkFast(t *testing.T, schema, value []byte) bool {
	t.Helper()
	doc, err := decodeJSON(schema)
	if err != nil {
		return false
	}
	f := compileFast(doc)
	if f == nil {
		return false
	}
	sch, err := Compile(schema)
	if err != nil {
		t.Fatalf("a fast schema does not compile: %s: %v", schema, err)
	}
	if !json.Valid(value) {
		return false
	}
	v, err := DecodeArgs(value)
	if err != nil {
		return false
	}
	verr := validateInstance(sch, v)
	inPlace := f.acceptsJSON(value)
	if inPlace && verr != nil {
		t.Fatalf("the in-place walk accepted what jsonschema rejects: schema %s, value %s: %v", schema, value, verr)
	}
	if !f.accepts(v) {
		return inPlace
	}
	if verr != nil {
		t.Fatalf("the fast walk accepted what jsonschema rejects: schema %s, value %s: %v", schema, value, verr)
	}
	return true
}

func FuzzFastAgreesWithJSONSchema(f *testing.F) {
	for _, s := range fastSeeds {
		for _, v := range fastValues[:6] {
			f.Add([]byte(s), []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		if len(schema) > 4<<10 || len(value) > 4<<10 {
			return
		}
		checkFast(t, schema, value)
	})
}

// TestFastInPlaceBoundsKeys: an object with many members is not read in place (the walk's
// repeated-key check is quadratic) but still validated, by the decoded path.
func TestFastInPlaceBoundsKeys(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"type":"object"}`)))
	if err != nil {
		t.Fatal(err)
	}
	f := compileFast(doc)
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range maxFastKeys + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteByte('}')
	if f.acceptsJSON(b.Bytes()) {
		t.Fatalf("an object of %d members was read in place", maxFastKeys+1)
	}
	var c Cache
	l, problem := c.Schema(context.Background(), json.RawMessage(`{"type":"object"}`), "inputSchema", Limits{MaxCost: 10000, MaxNodes: 1000})
	if l == nil {
		t.Fatal(problem)
	}
	if err := l.ValidateJSON(context.Background(), b.Bytes()); err != nil {
		t.Fatalf("the decoded path refused a valid object: %v", err)
	}
}
