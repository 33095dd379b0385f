package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// corpusTool is one tool of a captured tools/list (testdata/servers/*.json, written by
// integration.TestProviderSchemas) or of testdata/hard.json.
type corpusTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type corpusFile struct {
	Source string       `json:"source"`
	Tools  []corpusTool `json:"tools"`
}

// corpus loads every schema the property test runs on, as "file/tool" → schema.
func corpus(t *testing.T) (names []string, schemas map[string]json.RawMessage) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "servers", "*.json"))
	if len(files) == 0 {
		t.Fatal("no captured server schemas in testdata/servers (go test ./integration -run TestProviderSchemas -update-provider-testdata)")
	}
	files = append(files, filepath.Join("testdata", "hard.json"))
	schemas = map[string]json.RawMessage{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cf corpusFile
		if err := json.Unmarshal(b, &cf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range cf.Tools {
			n := strings.TrimSuffix(filepath.Base(f), ".json") + "/" + tool.Name
			names = append(names, n)
			schemas[n] = tool.InputSchema
		}
	}
	return names, schemas
}

func compileForTest(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource("urn:test", doc); err != nil {
		return nil, err
	}
	return c.Compile("urn:test")
}

func valid(sch *jsonschema.Schema, v any) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(encode(v)))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// geminiAsJSONSchema turns Gemini's "nullable": true into a JSON Schema type list, so the
// validator reads an adapted "parameters" schema the way Gemini does.
func geminiAsJSONSchema(v any) any {
	switch x := v.(type) {
	case *object:
		for _, k := range x.keys {
			x.vals[k] = geminiAsJSONSchema(x.vals[k])
		}
		if x.vals["nullable"] == true {
			if t, ok := x.str("type"); ok {
				x.set("type", []any{t, "null"})
			} else if a, ok := x.vals["anyOf"].([]any); ok {
				n := newObject()
				n.set("type", "null")
				x.set("anyOf", append(a, n))
			}
			if e, ok := x.vals["enum"].([]any); ok {
				x.set("enum", append(e, nil))
			}
		}
	case []any:
		for i := range x {
			x[i] = geminiAsJSONSchema(x[i])
		}
	}
	return v
}

// TestAdaptedSchemasAcceptValidArguments is the property the adapter promises: for every
// schema of every npm server in integration/ and every hard case, arguments valid for the
// server's schema are accepted by each adapted schema (for OpenAI strict: in the complete
// form the model must write, every property present, null for the absent optional ones),
// and MapArguments turns them back into exactly the original arguments.
func TestAdaptedSchemasAcceptValidArguments(t *testing.T) {
	names, schemas := corpus(t)
	const perSchema = 30
	rng := rand.New(rand.NewPCG(1, 2))
	var generated, toolsWithInstances int
	strictOK := 0
	for _, name := range names {
		raw := schemas[name]
		orig, err := compileForTest(raw)
		if err != nil {
			t.Errorf("%s: original schema does not compile: %v", name, err)
			continue
		}
		root, _ := decode(raw)
		g := &gen{root: root.(*object), rng: rng}
		var instances []any
		for range perSchema * 4 {
			if len(instances) == perSchema {
				break
			}
			inst := g.value(root, 0)
			if valid(orig, inst) == nil {
				instances = append(instances, inst)
			}
		}
		generated += len(instances)
		if len(instances) > 0 {
			toolsWithInstances++
		}
		for _, target := range Targets() {
			a, err := Adapt(raw, target)
			if err != nil {
				t.Fatalf("%s: Adapt(%s): %v", name, target, err)
			}
			if target == OpenAIStrict {
				if !a.OK() {
					continue // sent non-strict; Toolset tests cover the fallback
				}
				strictOK++
			}
			adaptedDoc, _ := decode(a.Schema)
			if target == GeminiParameters {
				adaptedDoc = geminiAsJSONSchema(adaptedDoc)
			}
			adapted, err := compileForTest(encode(adaptedDoc))
			if err != nil {
				t.Errorf("%s: %s: adapted schema does not compile: %v\n%s", name, target, err, a.Schema)
				continue
			}
			for _, inst := range instances {
				sent := clone(inst)
				if target == OpenAIStrict {
					sent = fill(sent, adaptedDoc.(*object), 0)
				}
				if err := valid(adapted, sent); err != nil {
					t.Errorf("%s: %s: adapted schema rejects %s (valid for the original as %s): %v\nadapted: %s", name, target, encode(sent), encode(inst), err, a.Schema)
					break
				}
				back, err := a.MapArguments(encode(sent))
				if err != nil {
					t.Errorf("%s: %s: MapArguments(%s): %v", name, target, encode(sent), err)
					break
				}
				got, _ := decode(back)
				if !equalDroppingNulls(got, inst) {
					t.Errorf("%s: %s: MapArguments(%s) = %s, want %s", name, target, encode(sent), back, encode(inst))
					break
				}
				if err := valid(orig, got); err != nil {
					t.Errorf("%s: %s: MapArguments(%s) = %s, which the original schema rejects: %v", name, target, encode(sent), back, err)
					break
				}
			}
		}
	}
	t.Logf("%d schemas, %d with generated arguments, %d argument sets, %d strict-adaptable", len(names), toolsWithInstances, generated, strictOK)
	if toolsWithInstances < len(names)*9/10 {
		t.Errorf("generated valid arguments for only %d of %d schemas", toolsWithInstances, len(names))
	}
}

// equalDroppingNulls reports whether got is want, except that properties whose value in
// want is null may be missing from got (OpenAI strict mode cannot tell "absent" from null
// for an optional property; MapArguments reads null as absent).
func equalDroppingNulls(got, want any) bool {
	switch w := want.(type) {
	case *object:
		g, ok := got.(*object)
		if !ok {
			return false
		}
		for _, k := range g.keys {
			if _, ok := w.get(k); !ok {
				return false
			}
		}
		for _, k := range w.keys {
			gv, ok := g.get(k)
			if !ok {
				if w.vals[k] != nil {
					return false
				}
				continue
			}
			if !equalDroppingNulls(gv, w.vals[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equalDroppingNulls(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return jsonEqual(got, want)
}

// fill completes arguments the way OpenAI strict mode makes a model write them: every
// declared property present, null where the arguments leave one out.
func fill(v any, s *object, depth int) any {
	if depth > maxDepth {
		return v
	}
	switch x := v.(type) {
	case *object:
		props := s.obj("properties")
		if props == nil {
			if b := fillBranch(x, s); b != nil {
				return fill(v, b, depth+1)
			}
			return v
		}
		for _, k := range props.keys {
			ps, _ := props.vals[k].(*object)
			if cur, ok := x.get(k); ok {
				if ps != nil {
					x.set(k, fill(cur, ps, depth+1))
				}
				continue
			}
			x.set(k, nil)
		}
		// keep the schema's order, as a model writing all properties would
		ordered := newObject()
		for _, k := range props.keys {
			if val, ok := x.get(k); ok {
				ordered.set(k, val)
			}
		}
		for _, k := range x.keys {
			if _, ok := ordered.get(k); !ok {
				ordered.set(k, x.vals[k])
			}
		}
		return ordered
	case []any:
		if is := s.obj("items"); is != nil {
			for i := range x {
				x[i] = fill(x[i], is, depth+1)
			}
		} else if b := fillBranch(x, s); b != nil {
			return fill(v, b, depth+1)
		}
	}
	return v
}

func fillBranch(v any, s *object) *object {
	a, _ := s.vals["anyOf"].([]any)
	for _, e := range a {
		b, ok := e.(*object)
		if !ok {
			continue
		}
		switch x := v.(type) {
		case *object:
			props := b.obj("properties")
			if props == nil {
				continue
			}
			all := true
			for _, k := range x.keys {
				if _, ok := props.get(k); !ok {
					all = false
				}
			}
			if all {
				return b
			}
		case []any:
			if b.obj("items") != nil {
				return b
			}
		}
	}
	return nil
}

// gen generates JSON values for a schema; the caller keeps those the original schema's
// validator accepts.
type gen struct {
	root *object
	rng  *rand.Rand
}

func (g *gen) value(v any, depth int) any {
	s, ok := v.(*object)
	if !ok || depth > 12 {
		if v == false {
			return nil
		}
		return "x"
	}
	if ref, ok := s.str("$ref"); ok {
		if depth > 6 {
			return nil
		}
		if t, ok := resolvePointer(g.root, ref); ok {
			merged := clone(t).(*object)
			for _, k := range s.keys {
				if k != "$ref" {
					merged.set(k, s.vals[k])
				}
			}
			return g.value(merged, depth+1)
		}
	}
	if c, ok := s.get("const"); ok {
		return clone(c)
	}
	if e, ok := s.vals["enum"].([]any); ok && len(e) > 0 {
		return clone(e[g.rng.IntN(len(e))])
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if a, ok := s.vals[k].([]any); ok && len(a) > 0 {
			merged := clone(s).(*object)
			merged.del("anyOf")
			merged.del("oneOf")
			if b, ok := a[g.rng.IntN(len(a))].(*object); ok {
				mergeInto(merged, b)
			}
			return g.value(merged, depth+1)
		}
	}
	if a, ok := s.vals["allOf"].([]any); ok {
		merged := clone(s).(*object)
		merged.del("allOf")
		for _, e := range a {
			if b, ok := e.(*object); ok {
				mergeInto(merged, b)
			}
		}
		return g.value(merged, depth+1)
	}
	types := typeSet(s)
	var typ string
	switch {
	case len(types) > 0:
		var ts []string
		for t := range types {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		typ = ts[g.rng.IntN(len(ts))]
	case s.obj("properties") != nil:
		typ = "object"
	case s.vals["items"] != nil || s.vals["prefixItems"] != nil:
		typ = "array"
	default:
		typ = []string{"string", "integer", "boolean", "object", "array"}[g.rng.IntN(5)]
	}
	switch typ {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 0
	case "integer", "number":
		return g.number(s, typ == "integer")
	case "string":
		return g.str(s)
	case "array":
		var out []any = []any{}
		if pi, ok := s.vals["prefixItems"].([]any); ok {
			for _, p := range pi {
				out = append(out, g.value(p, depth+1))
			}
			return out
		}
		lo, hi := 0, 3
		if n, ok := intKeyword(s, "minItems"); ok {
			lo = n
		}
		if n, ok := intKeyword(s, "maxItems"); ok {
			hi = min(hi, n)
		}
		hi = max(hi, lo)
		n := lo + g.rng.IntN(hi-lo+1)
		for range n {
			out = append(out, g.value(s.vals["items"], depth+1))
		}
		if s.vals["uniqueItems"] == true && len(out) > 1 {
			out = out[:1]
		}
		return out
	default:
		o := newObject()
		props := s.obj("properties")
		req := requiredSet(s)
		if props != nil {
			for _, k := range props.keys {
				if req[k] || g.rng.IntN(2) == 0 {
					o.set(k, g.value(props.vals[k], depth+1))
				}
			}
		}
		for k := range req {
			if _, ok := o.get(k); !ok {
				o.set(k, "x")
			}
		}
		if props == nil && s.obj("additionalProperties") != nil && g.rng.IntN(2) == 0 {
			o.set("k", g.value(s.vals["additionalProperties"], depth+1))
		}
		return o
	}
}

func mergeInto(dst, src *object) {
	for _, k := range src.keys {
		switch k {
		case "properties":
			dp := dst.obj("properties")
			if dp == nil {
				dp = newObject()
				dst.set("properties", dp)
			}
			sp := src.obj("properties")
			if sp == nil {
				continue
			}
			for _, pk := range sp.keys {
				dp.set(pk, sp.vals[pk])
			}
		case "required":
			r, _ := dst.vals["required"].([]any)
			s, _ := src.vals["required"].([]any)
			dst.set("required", append(slices.Clone(r), s...))
		default:
			dst.set(k, src.vals[k])
		}
	}
}

func intKeyword(s *object, k string) (int, bool) {
	n, ok := s.vals[k].(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > 1000 {
		return 0, false
	}
	return int(i), true
}

func (g *gen) number(s *object, integer bool) any {
	lo, hi := -50.0, 1000.0
	if n, ok := s.vals["minimum"].(json.Number); ok {
		f, _ := n.Float64()
		lo = f
		hi = max(hi, f+100)
	}
	if n, ok := s.vals["exclusiveMinimum"].(json.Number); ok {
		f, _ := n.Float64()
		lo = f + 1
		hi = max(hi, lo+100)
	}
	if n, ok := s.vals["maximum"].(json.Number); ok {
		f, _ := n.Float64()
		hi = f
	}
	if n, ok := s.vals["exclusiveMaximum"].(json.Number); ok {
		f, _ := n.Float64()
		hi = f - 1
	}
	if hi < lo {
		hi = lo
	}
	x := lo + g.rng.Float64()*(hi-lo)
	if m, ok := s.vals["multipleOf"].(json.Number); ok {
		if f, err := m.Float64(); err == nil && f > 0 {
			x = float64(int(x/f)) * f
			if x < lo {
				x += f
			}
		}
	}
	if integer || g.rng.IntN(2) == 0 {
		return json.Number(fmt.Sprint(int64(x)))
	}
	return json.Number(fmt.Sprintf("%.3f", x))
}

func (g *gen) str(s *object) any {
	switch f, _ := s.str("format"); f {
	case "date-time":
		return "2026-12-01T08:30:00Z"
	case "date":
		return "2026-12-01"
	case "time":
		return "08:30:00Z"
	case "email":
		return "ada@example.com"
	case "uri", "url":
		return "https://example.com/a"
	case "uuid":
		return "123e4567-e89b-12d3-a456-426614174000"
	case "ipv4":
		return "127.0.0.1"
	}
	if p, _ := s.str("pattern"); p == "^[A-Z]{3}$" {
		return "ABC"
	}
	words := []string{"alpha", "b", "", "path/to/file.txt", "名前", "with \"quotes\"", "ABC", "0123456789abcdef"}
	w := words[g.rng.IntN(len(words))]
	if n, ok := intKeyword(s, "minLength"); ok && len(w) < n {
		w += strings.Repeat("z", n-len(w))
	}
	if n, ok := intKeyword(s, "maxLength"); ok && len(w) > n {
		w = w[:n]
	}
	return w
}
