package schemaguard

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// verdictCases are argument cases per schema feature, with the verdict santhosh-tekuri/
// jsonschema/v6 (the validator before google/jsonschema-go) gave each: the table was run
// against it first, so a switch of validator keeps every accept and reject. A rejection names
// the argument path (want) in its message.
var verdictCases = []struct {
	feature, schema string
	args            []verdictArg
}{
	{"required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, []verdictArg{
		{`{"a":"x"}`, ""}, {`{}`, "a"}, {`{"b":1}`, "a"},
	}},
	{"types", `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"},"l":{"type":"array"},"z":{"type":"null"},"u":{"type":["string","null"]}}}`, []verdictArg{
		{`{"s":"x","i":3,"n":1.5,"b":true,"o":{},"l":[],"z":null,"u":null}`, ""},
		{`{"i":3.0}`, ""}, {`{"n":3}`, ""}, {`{"u":"x"}`, ""},
		{`{"s":1}`, "/s"}, {`{"i":1.5}`, "/i"}, {`{"i":"3"}`, "/i"}, {`{"n":"1"}`, "/n"}, {`{"b":"true"}`, "/b"},
		{`{"o":[]}`, "/o"}, {`{"l":{}}`, "/l"}, {`{"z":0}`, "/z"}, {`{"u":1}`, "/u"},
	}},
	{"enum", `{"type":"object","properties":{"e":{"enum":["a","b",1,null]},"f":{"type":"string","enum":["x","y"]}}}`, []verdictArg{
		{`{"e":"a"}`, ""}, {`{"e":1}`, ""}, {`{"e":1.0}`, ""}, {`{"e":null}`, ""}, {`{"f":"y"}`, ""},
		{`{"e":"c"}`, "/e"}, {`{"e":2}`, "/e"}, {`{"e":"1"}`, "/e"}, {`{"f":"z"}`, "/f"},
	}},
	{"const", `{"type":"object","properties":{"c":{"const":"v"},"k":{"const":{"a":[1,2]}},"t":{"const":true}}}`, []verdictArg{
		{`{"c":"v"}`, ""}, {`{"k":{"a":[1,2]}}`, ""}, {`{"t":true}`, ""},
		{`{"c":"w"}`, "/c"}, {`{"k":{"a":[2,1]}}`, "/k"}, {`{"t":1}`, "/t"},
	}},
	{"strings", `{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-z]+$"}}}`, []verdictArg{
		{`{"s":"ab"}`, ""}, {`{"s":"abc"}`, ""}, {`{"s":"a"}`, "/s"}, {`{"s":"abcd"}`, "/s"}, {`{"s":"A1"}`, "/s"},
		{`{"s":"éé"}`, "/s"},
	}},
	{"numbers", `{"type":"object","properties":{"n":{"type":"number","minimum":1,"maximum":10,"multipleOf":0.5},"x":{"exclusiveMinimum":0,"exclusiveMaximum":5}}}`, []verdictArg{
		{`{"n":1}`, ""}, {`{"n":10}`, ""}, {`{"n":2.5}`, ""}, {`{"x":4.9}`, ""},
		{`{"n":0.5}`, "/n"}, {`{"n":11}`, "/n"}, {`{"n":2.25}`, "/n"}, {`{"x":0}`, "/x"}, {`{"x":5}`, "/x"},
	}},
	{"big integers", `{"type":"object","properties":{"i":{"type":"integer"},"m":{"type":"integer","maximum":9007199254740992},"c":{"const":9007199254740993}}}`, []verdictArg{
		{`{"i":123456789012345678901234567890}`, ""}, {`{"i":1e3}`, ""}, {`{"m":9007199254740992}`, ""},
		{`{"c":9007199254740993}`, ""},
		{`{"i":1.5e-1}`, "/i"}, {`{"m":9007199254740993}`, "/m"}, {`{"m":1e400}`, "/m"}, {`{"c":9007199254740992}`, "/c"},
	}},
	{"formats draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date-time"},"id":{"type":"string","format":"uuid"},"e":{"type":"string","format":"email"},"x":{"type":"string","format":"no-such-format"}}}`, []verdictArg{
		{`{"u":"https://example.com/a?b=c","d":"2026-12-03T08:00:00Z","id":"123e4567-e89b-12d3-a456-426614174000","e":"a@b.example","x":"anything"}`, ""},
		{`{"d":"2026-12-03T08:00:00.5+01:00"}`, ""}, {`{"u":"urn:isbn:0451450523"}`, ""},
		{`{"u":"not a uri"}`, "/u"}, {`{"u":"/relative/path"}`, "/u"}, {`{"d":"2026-12-03"}`, "/d"}, {`{"d":"2026-02-30T00:00:00Z"}`, "/d"},
		{`{"id":"123e4567"}`, "/id"}, {`{"e":"nobody"}`, "/e"},
		{`{"u":5}`, "/u"},
	}},
	{"formats 2020-12 are annotations", `{"type":"object","properties":{"u":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"}}}`, []verdictArg{
		{`{"u":"not a uri","id":"x"}`, ""}, {`{"u":1}`, "/u"},
	}},
	{"$ref/$defs", `{"type":"object","$defs":{"pos":{"type":"integer","minimum":0},"pt":{"type":"object","properties":{"x":{"$ref":"#/$defs/pos"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/pt"},"l":{"type":"array","items":{"$ref":"#/$defs/pt"}}}}`, []verdictArg{
		{`{"p":{"x":1},"l":[{"x":0},{"x":2}]}`, ""},
		{`{"p":{"x":-1}}`, "/p/x"}, {`{"p":{}}`, "/p"}, {`{"l":[{"x":0},{"x":"a"}]}`, "/l/1/x"},
	}},
	{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"s":{"type":"string","maxLength":2}},"properties":{"a":{"$ref":"#/definitions/s"},"b":{"$ref":"#/definitions/s","minLength":5}}}`, []verdictArg{
		{`{"a":"xy"}`, ""}, {`{"b":"x"}`, ""},
		{`{"a":"xyz"}`, "/a"}, {`{"a":1}`, "/a"},
	}},
	{"draft-04 exclusiveMinimum booleans", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":5,"exclusiveMaximum":false},"i":{"type":"integer"}}}`, []verdictArg{
		{`{"n":0.1}`, ""}, {`{"n":5}`, ""},
		{`{"i":1.0}`, ""}, {`{"n":0}`, "/n"}, {`{"n":5.1}`, "/n"}, {`{"i":1.5}`, "/i"},
	}},
	{"draft-04 id and definitions", `{"$schema":"http://json-schema.org/draft-04/schema#","id":"http://example.com/root.json","type":"object","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}},"required":["a"]}`, []verdictArg{
		{`{"a":"x"}`, ""}, {`{"a":1}`, "/a"}, {`{}`, "a"},
	}},
	{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"n":{"exclusiveMaximum":5},"c":{"const":1}}}`, []verdictArg{
		{`{"n":4,"c":1}`, ""}, {`{"n":5}`, "/n"}, {`{"c":2}`, "/c"},
	}},
	{"2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","$defs":{"p":{"type":"integer"}},"properties":{"p":{"$ref":"#/$defs/p"}},"unevaluatedProperties":false}`, []verdictArg{
		{`{"p":1}`, ""}, {`{"p":"1"}`, "/p"}, {`{"p":1,"q":2}`, "q"},
	}},
	{"patternProperties", `{"type":"object","patternProperties":{"^x-":{"type":"string"},"^n_":{"type":"number"}},"additionalProperties":false}`, []verdictArg{
		{`{"x-a":"s","n_b":2}`, ""}, {`{}`, ""},
		{`{"x-a":1}`, "/x-a"}, {`{"other":1}`, "other"},
	}},
	{"additionalProperties", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, []verdictArg{
		{`{"a":"s","b":1,"c":2}`, ""}, {`{"b":"x"}`, "/b"}, {`{"a":1}`, "/a"},
	}},
	{"additionalProperties false", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, []verdictArg{
		{`{"a":"s"}`, ""}, {`{"a":"s","b":1}`, "b"},
	}},
	{"oneOf", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","minimum":0},{"type":"number","maximum":10}]}}}`, []verdictArg{
		{`{"v":"s"}`, ""}, {`{"v":20}`, ""}, {`{"v":-0.5}`, ""},
		{`{"v":5}`, "/v"}, {`{"v":true}`, "/v"},
	}},
	{"anyOf", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string","minLength":3},{"type":"array","items":{"type":"integer"}}]}}}`, []verdictArg{
		{`{"v":"abc"}`, ""}, {`{"v":[1,2]}`, ""},
		{`{"v":"ab"}`, "/v"}, {`{"v":[1,"2"]}`, "/v"}, {`{"v":1}`, "/v"},
	}},
	{"allOf, not, if/then/else", `{"type":"object","properties":{"a":{"allOf":[{"type":"string"},{"minLength":2}]},"b":{"not":{"type":"null"}},"c":{"if":{"type":"string"},"then":{"maxLength":1},"else":{"type":"integer"}}}}`, []verdictArg{
		{`{"a":"ab","b":1,"c":"x"}`, ""}, {`{"c":3}`, ""},
		{`{"a":"a"}`, "/a"}, {`{"a":22}`, "/a"}, {`{"b":null}`, "/b"}, {`{"c":"xy"}`, "/c"}, {`{"c":1.5}`, "/c"},
	}},
	{"arrays", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2,"uniqueItems":true},"t":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false},"h":{"type":"array","contains":{"const":1}}}}`, []verdictArg{
		{`{"l":["a","b"],"t":[1,"x"],"h":[0,1]}`, ""}, {`{"t":[1]}`, ""},
		{`{"l":[]}`, "/l"}, {`{"l":["a","b","c"]}`, "/l"}, {`{"l":["a","a"]}`, "/l"}, {`{"l":[1]}`, "/l/0"},
		{`{"t":[1,"x",3]}`, "/t"}, {`{"t":["x"]}`, "/t/0"}, {`{"h":[0,2]}`, "/h"},
	}},
	{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"array","items":[{"type":"integer"}],"additionalItems":{"type":"string"}}}}`, []verdictArg{
		{`{"t":[1,"a","b"]}`, ""}, {`{"t":["a"]}`, "/t/0"}, {`{"t":[1,2]}`, "/t/1"},
	}},
	{"objects", `{"type":"object","minProperties":1,"maxProperties":2,"propertyNames":{"pattern":"^[a-z]+$"},"dependentRequired":{"a":["b"]}}`, []verdictArg{
		{`{"a":1,"b":2}`, ""}, {`{"c":1}`, ""},
		{`{}`, "minProperties"}, {`{"a":1,"b":2,"c":3}`, "maxProperties"}, {`{"A":1}`, "A"}, {`{"a":1}`, "b"},
	}},
	{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"],"c":{"required":["d"]}}}`, []verdictArg{
		{`{"a":1,"b":2}`, ""}, {`{"c":1,"d":2}`, ""}, {`{"a":1}`, "b"}, {`{"c":1}`, "d"},
	}},
	{"nested objects", `{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"boolean"}},"required":["q"]}}}}}`, []verdictArg{
		{`{"o":{"p":{"q":false}}}`, ""}, {`{"o":{"p":{"q":"no"}}}`, "/o/p/q"}, {`{"o":{"p":{}}}`, "/o/p"},
	}},
	{"boolean schemas", `{"type":"object","properties":{"any":true,"none":false}}`, []verdictArg{
		{`{"any":[1,{}]}`, ""}, {`{"none":1}`, "/none"},
	}},
	{"recursive $ref", `{"type":"object","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}}}},"properties":{"head":{"$ref":"#/$defs/node"}}}`, []verdictArg{
		{`{"head":{"v":1,"next":{"v":2,"next":{"v":3}}}}`, ""}, {`{"head":{"v":1,"next":{"v":"2"}}}`, "/head/next/v"},
	}},
	{"$id and anchors", `{"$id":"https://example.com/s","type":"object","$defs":{"a":{"$anchor":"A","type":"string"}},"properties":{"x":{"$ref":"#A"},"y":{"$ref":"https://example.com/s#/$defs/a"}}}`, []verdictArg{
		{`{"x":"s","y":"t"}`, ""}, {`{"x":1}`, "/x"}, {`{"y":1}`, "/y"},
	}},
}

type verdictArg struct {
	args string
	want string // "": accepted; else rejected, and the message names this
}

// TestVerdicts: every case gets the verdict santhosh-tekuri/jsonschema/v6 gave, through
// Compile/ValidateArgs and through the Cache's Schema.ValidateJSON (the fast walk first).
func TestVerdicts(t *testing.T) {
	for _, tc := range verdictCases {
		t.Run(tc.feature, func(t *testing.T) {
			sch, err := Compile(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var c Cache
			l, problem := c.Schema(context.Background(), json.RawMessage(tc.schema), "inputSchema", Limits{MaxCost: 10_000, MaxNodes: 10_000})
			if l == nil {
				t.Fatalf("cache: %s", problem)
			}
			for _, a := range tc.args {
				for _, way := range []struct {
					name string
					err  error
				}{
					{"ValidateArgs", ValidateArgs(sch, json.RawMessage(a.args))},
					{"ValidateJSON", l.ValidateJSON(context.Background(), json.RawMessage(a.args))},
				} {
					err := way.err
					switch {
					case a.want == "" && err != nil:
						t.Errorf("%s %s: rejected, want accepted: %v", way.name, a.args, err)
					case a.want != "" && err == nil:
						t.Errorf("%s %s: accepted, want rejected (%s)", way.name, a.args, a.want)
					case a.want != "" && !errors.Is(err, ErrInvalidArguments):
						t.Errorf("%s %s: %v, want ErrInvalidArguments", way.name, a.args, err)
					case a.want != "" && !strings.Contains(err.Error(), a.want):
						t.Errorf("%s %s: %v, want it to name %q", way.name, a.args, err, a.want)
					}
					if testing.Verbose() && err != nil && way.name == "ValidateArgs" {
						t.Logf("%s: %v", a.args, err)
					}
				}
			}
		})
	}
}
