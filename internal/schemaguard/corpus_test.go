package schemaguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// corpusFiles hold the inputSchemas of real servers: the compatibility sweep's (sweep.json),
// npm servers outside it (unseen.json) and the npm servers the integration tests run
// (bridge/provider/testdata/servers).
func corpusSchemas(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	files := []string{
		filepath.Join("..", "..", "bridge", "toolsearch", "testdata", "sweep.json"),
		filepath.Join("..", "..", "bridge", "toolsearch", "testdata", "unseen.json"),
	}
	more, err := filepath.Glob(filepath.Join("..", "..", "bridge", "provider", "testdata", "servers", "*.json"))
	if err != nil || len(more) == 0 {
		t.Fatalf("provider testdata: %v", err)
	}
	files = append(files, more...)
	type tool struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	out := map[string]json.RawMessage{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Servers []struct {
				ID    string `json:"id"`
				Tools []tool `json:"tools"`
			} `json:"servers"`
			Tools []tool `json:"tools"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(doc.Tools) > 0 {
			doc.Servers = append(doc.Servers, struct {
				ID    string `json:"id"`
				Tools []tool `json:"tools"`
			}{strings.TrimSuffix(filepath.Base(f), ".json"), doc.Tools})
		}
		for _, s := range doc.Servers {
			for _, tl := range s.Tools {
				out[s.ID+"/"+tl.Name] = tl.InputSchema
			}
		}
	}
	return out
}

type santhoshLoader struct{}

func (santhoshLoader) Load(url string) (any, error) { return nil, fmt.Errorf("refused %s", url) }

// santhoshCompile is the validator before google/jsonschema-go, as Compile configured it.
func santhoshCompile(schema []byte) (*santhosh.Schema, error) {
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.UseLoader(santhoshLoader{})
	if err := c.AddResource(rootBase, doc); err != nil {
		return nil, err
	}
	return c.Compile(rootBase)
}

// corpusArgs makes argument objects for a schema: {}, a value of each property's own type
// (required ones filled in), the first of each enum, and a value of the wrong type for one
// property at a time.
func corpusArgs(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	good := map[string]any{}
	wrong := map[string]any{}
	var enumFirst []map[string]any
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		var p struct {
			Type   any    `json:"type"`
			Enum   []any  `json:"enum"`
			Const  any    `json:"const"`
			Format string `json:"format"`
		}
		_ = json.Unmarshal(s.Properties[name], &p)
		typ, _ := p.Type.(string)
		if arr, ok := p.Type.([]any); ok && len(arr) > 0 {
			typ, _ = arr[0].(string)
		}
		var v, w any
		switch typ {
		case "string":
			v, w = "x", 1
			switch p.Format {
			case "uri":
				v = "https://example.com/x"
			case "uuid":
				v = "123e4567-e89b-12d3-a456-426614174000"
			case "date-time":
				v = "2026-12-03T08:00:00Z"
			}
		case "integer":
			v, w = 1, "1"
		case "number":
			v, w = 1.5, "1.5"
		case "boolean":
			v, w = true, "true"
		case "array":
			v, w = []any{}, map[string]any{}
		case "object":
			v, w = map[string]any{}, []any{}
		default:
			v, w = "x", nil
		}
		if len(p.Enum) > 0 {
			enumFirst = append(enumFirst, map[string]any{name: p.Enum[0]})
		}
		good[name], wrong[name] = v, w
	}
	enc := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	out := []string{`{}`, enc(good)}
	for _, m := range enumFirst {
		out = append(out, enc(m))
	}
	n := 0
	for _, name := range slices.Sorted(maps.Keys(wrong)) {
		if n == 6 {
			break
		}
		m := maps.Clone(good)
		m[name] = wrong[name]
		out = append(out, enc(m))
		n++
	}
	return out
}

// TestCorpusVerdicts: every inputSchema of the corpus compiles with Compile exactly when it
// compiled with santhosh-tekuri/jsonschema/v6 (a schema that did not is passed through,
// unvalidated, as before), and each generated argument object gets the same verdict.
func TestCorpusVerdicts(t *testing.T) {
	schemas := corpusSchemas(t)
	if len(schemas) < 600 {
		t.Fatalf("%d schemas in the corpus, want the whole corpus", len(schemas))
	}
	compiled, uncompilable, cases := 0, 0, 0
	for _, id := range slices.Sorted(maps.Keys(schemas)) {
		raw := schemas[id]
		old, oerr := santhoshCompile(raw)
		sch, nerr := Compile(raw)
		if (oerr == nil) != (nerr == nil) {
			t.Errorf("%s: compiles before %v, now %v", id, oerr, nerr)
			continue
		}
		if oerr != nil {
			uncompilable++
			continue
		}
		compiled++
		for _, args := range corpusArgs(raw) {
			cases++
			inst, err := DecodeArgs([]byte(args))
			if err != nil {
				t.Fatal(err)
			}
			before := old.Validate(inst) == nil
			err = ValidateArgs(sch, json.RawMessage(args))
			if before != (err == nil) {
				t.Errorf("%s: %s: accepted before %v, now %v (%v)", id, args, before, err == nil, err)
			}
		}
	}
	t.Logf("%d schemas: %d compile, %d do not (before and now); %d argument cases agree", len(schemas), compiled, uncompilable, cases)
}

// compileCases are schemas that break the meta-schema in ways servers have been seen to (or
// plausibly do): each compiles with Compile exactly when it did with
// santhosh-tekuri/jsonschema/v6.
var compileCases = []string{
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"enum":[]}}}`,
	`{"type":"object","properties":{"a":{"enum":[]}}}`,
	`{"type":"object","properties":{"a":{"type":"strng"}}}`,
	`{"type":"object","properties":{"a":{"type":["string","string"]}}}`,
	`{"type":"object","properties":{"a":{"type":[]}}}`,
	`{"type":"object","required":"a"}`,
	`{"type":"object","required":["a","a"]}`,
	`{"type":"object","required":[1]}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":[]}`,
	`{"type":"object","properties":{"a":{"minLength":-1}}}`,
	`{"type":"object","properties":{"a":{"minLength":1.5}}}`,
	`{"type":"object","properties":{"a":{"maxItems":"3"}}}`,
	`{"type":"object","properties":{"a":{"pattern":"("}}}`,
	`{"type":"object","properties":{"a":{"pattern":"\\p{L}+"}}}`,
	`{"type":"object","properties":{"a":{"pattern":"(?=x)"}}}`,
	`{"type":"object","patternProperties":{"(":{}}}`,
	`{"type":"object","properties":{"a":{"multipleOf":0}}}`,
	`{"type":"object","properties":{"a":{"multipleOf":-2}}}`,
	`{"type":"object","properties":{"a":{"minimum":"1"}}}`,
	`{"type":"object","properties":[]}`,
	`{"type":"object","properties":{"a":1}}`,
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
	`{"type":"object","properties":{"a":{"$ref":"#/definitions/missing"}}}`,
	`{"type":"object","additionalProperties":"no"}`,
	`{"type":"object","items":{"type":"string"},"uniqueItems":"yes"}`,
	`{"type":"object","format":1}`,
	`{"type":"object","properties":{"a":{"format":"uri"}},"$schema":"http://example.com/custom"}`,
	`{"type":"object","$defs":{"a":{"type":"nope"}}}`,
	`{"type":"object","allOf":{}}`,
	`{"type":"object","anyOf":[]}`,
	`{"type":"object","dependentRequired":{"a":"b"}}`,
	`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveRef":"#"}`,
	`{"type":"object","const":null}`,
	`{"type":"object","properties":{"a":{"exclusiveMinimum":true}}}`,
}

func TestCompileVerdicts(t *testing.T) {
	for _, schema := range compileCases {
		_, oerr := santhoshCompile([]byte(schema))
		_, nerr := Compile(json.RawMessage(schema))
		if (oerr == nil) != (nerr == nil) {
			t.Errorf("%s: compiled before: %v, now: %v", schema, firstLine(oerr), nerr)
		}
	}
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
