// This file is over 500 lines on purpose: it is the one table of every provider rule (its
// targets, one-line reason and check), which lint and adaptation share; splitting the table
// would scatter what has to be read side by side.

package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// Target is one place a host puts a tool's parameters schema: a model API's field, in one
// mode. Each target rejects different things, so the lint and the adapter take one.
type Target string

// The targets. OpenAI's Chat Completions and Responses APIs check function parameters the
// same way, so one pair of targets covers both.
const (
	// OpenAI is function "parameters" with strict mode off.
	OpenAI Target = "openai"
	// OpenAIStrict is function "parameters" with "strict": true (Structured Outputs).
	OpenAIStrict Target = "openai-strict"
	// Anthropic is the Messages API's "input_schema".
	Anthropic Target = "anthropic"
	// Gemini is a function declaration's "parametersJsonSchema" (JSON Schema).
	Gemini Target = "gemini"
	// GeminiParameters is a function declaration's "parameters": Gemini's Schema object, an
	// OpenAPI 3.0 subset that refuses every field it does not define.
	GeminiParameters Target = "gemini-parameters"
)

// Targets lists every target in a stable order.
func Targets() []Target {
	return []Target{OpenAI, OpenAIStrict, Anthropic, Gemini, GeminiParameters}
}

// ParseTarget returns the Target named s.
func ParseTarget(s string) (Target, error) {
	for _, t := range Targets() {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown target %q (want one of %s)", s, targetList())
}

func targetList() string {
	var s []string
	for _, t := range Targets() {
		s = append(s, string(t))
	}
	return strings.Join(s, ", ")
}

// Rule is one thing a model API is known to reject in a tool definition.
type Rule struct {
	// ID is stable; findings refer to it.
	ID string `json:"id"`
	// Targets are the fields that reject it.
	Targets []Target `json:"targets"`
	// Reason says in one line what the API does, with the error it gives where known.
	Reason string `json:"reason"`
}

// The rule IDs.
const (
	RuleSchemaObject      = "schema-object"
	RuleName              = "name"
	RuleRootType          = "root-type"
	RuleRootCombinator    = "root-combinator"
	RuleArrayItems        = "array-items"
	RuleExternalRef       = "external-ref"
	RuleLocalRef          = "local-ref"
	RuleDraft202012       = "draft-2020-12"
	RuleGeminiField       = "gemini-unknown-field"
	RuleGeminiTypeList    = "gemini-type-list"
	RuleGeminiNoType      = "gemini-no-type"
	RuleGeminiEnum        = "gemini-enum-strings"
	RuleGeminiEmptyObject = "gemini-empty-object"
	RuleGeminiNotObject   = "gemini-properties-not-object"
	RuleGeminiFormat      = "gemini-string-format"
	RuleStrictAdditional  = "strict-additional-properties"
	RuleStrictRequired    = "strict-required"
	RuleStrictKeyword     = "strict-keyword"
	RuleStrictType        = "strict-no-type"
	RuleStrictFormat      = "strict-format"
	RuleStrictLimits      = "strict-limits"
)

var allTargets = []Target{OpenAI, OpenAIStrict, Anthropic, Gemini, GeminiParameters}

// rules is the one table the lint and the adapter share.
var rules = []Rule{
	{RuleSchemaObject, allTargets, `parameters must be a JSON object schema; every API rejects the tool otherwise`},
	{RuleName, allTargets, `OpenAI and Anthropic want ^[a-zA-Z0-9_-]{1,64}$, Gemini a letter or "_" first and at most 64 of [a-zA-Z0-9_.:-]`},
	{RuleRootType, allTargets, `the top level must be "type": "object": OpenAI 400 "schema must be a JSON Schema of 'type: \"object\"'", Anthropic "input_schema.type: Field required", Gemini "parameters schema should be of type OBJECT"`},
	{RuleRootCombinator, []Target{OpenAI, OpenAIStrict, Anthropic}, `anyOf/oneOf/allOf (OpenAI also enum/not) at the top level: Anthropic 400 "input_schema does not support oneOf, allOf, or anyOf at the top level", OpenAI likewise`},
	{RuleArrayItems, []Target{OpenAI, OpenAIStrict, GeminiParameters}, `an array without "items": OpenAI 400 "array schema missing items" for the whole request, Gemini "items: missing field"`},
	{RuleExternalRef, allTargets, `a "$ref" outside the schema: no API fetches it (and the bridge refuses to), so the model never sees that part`},
	{RuleLocalRef, []Target{Gemini, GeminiParameters}, `"$ref"/"$defs": Gemini 400 "reference to undefined schema" (gemini-cli#13326) or "$ref was set alongside unsupported fields"; "parameters" has no such fields at all`},
	{RuleDraft202012, []Target{Anthropic}, `not a valid JSON Schema draft 2020-12 (e.g. boolean exclusiveMinimum from draft 4): Anthropic 400 "JSON schema is invalid. It must match JSON Schema draft 2020-12"`},
	{RuleGeminiField, []Target{GeminiParameters}, `a field Gemini's Schema does not define (additionalProperties, $schema, const, oneOf, exclusiveMinimum, propertyNames, ...): 400 "Invalid JSON payload received. Unknown name ... Cannot find field"`},
	{RuleGeminiTypeList, []Target{GeminiParameters}, `"type" as a list: Gemini's type is one enum value, 400 "Invalid value at ... type"`},
	{RuleGeminiNoType, []Target{GeminiParameters}, `a property, item or anyOf variant without "type": Gemini 400 "schema didn't specify the schema type field"; gemini-cli skips such tools ("missing types in its parameter schema")`},
	{RuleGeminiEnum, []Target{GeminiParameters}, `enum values that are not strings: Gemini's enum is a list of strings, 400 "Invalid value at ... enum"`},
	{RuleGeminiEmptyObject, []Target{GeminiParameters}, `an object type without properties: Gemini 400 "properties: should be non-empty for OBJECT type"`},
	{RuleGeminiNotObject, []Target{GeminiParameters}, `"properties" or "required" on a type other than object: Gemini 400 "properties: only allowed for OBJECT type"`},
	{RuleGeminiFormat, []Target{GeminiParameters}, `a string "format" other than "enum" or "date-time": Gemini 400 "only 'enum' and 'date-time' are supported for STRING type"`},
	{RuleStrictAdditional, []Target{OpenAIStrict}, `an object without "additionalProperties": false: OpenAI strict 400 "'additionalProperties' is required to be supplied and to be false"`},
	{RuleStrictRequired, []Target{OpenAIStrict}, `a property missing from "required": OpenAI strict 400 "'required' is required to be supplied and to be an array including every key in properties"`},
	{RuleStrictKeyword, []Target{OpenAIStrict}, `a keyword outside OpenAI's strict subset (minLength, maxLength, uniqueItems, patternProperties, propertyNames, min/maxProperties, allOf, oneOf, not, if/then/else, ...): 400 "... is not permitted"`},
	{RuleStrictType, []Target{OpenAIStrict}, `a schema with no "type" (nor anyOf, enum or const), e.g. {} for "anything": OpenAI strict 400 "schema must have a 'type' key"`},
	{RuleStrictFormat, []Target{OpenAIStrict}, `a string format OpenAI strict does not support (it supports date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid)`},
	{RuleStrictLimits, []Target{OpenAIStrict}, `over OpenAI strict's limits: 10 levels of nesting, 5000 properties, 1000 enum values`},
}

// Rules returns the table of rules the lint checks and the adapter fixes.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = r
		out[i].Targets = slices.Clone(r.Targets)
	}
	return out
}

// RuleByID returns the rule with that ID.
func RuleByID(id string) (Rule, bool) {
	for _, r := range rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

func appliesTo(id string, t Target) bool {
	r, ok := RuleByID(id)
	return ok && slices.Contains(r.Targets, t)
}

// Finding is one rule a tool breaks for one target: where first, how often, and what.
type Finding struct {
	Target Target `json:"target"`
	Rule   string `json:"rule"`
	// Path is the JSON pointer into the schema of the first place ("" is the root).
	Path string `json:"path"`
	// Count is how many places break the rule this way (1 or more).
	Count int `json:"count"`
	// Detail names what is wrong there (a keyword, a value), in the schema's own terms.
	Detail string `json:"detail"`
}

// String reads "openai-strict: strict-keyword at /properties/a: minLength (and 3 more places)".
func (f Finding) String() string {
	where := f.Path
	if where == "" {
		where = "the root"
	}
	s := fmt.Sprintf("%s: %s at %s: %s", f.Target, f.Rule, printable(where), printable(f.Detail))
	if f.Count > 1 {
		s += fmt.Sprintf(" (and %d more place%s)", f.Count-1, plural(f.Count-1))
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Lint returns what target rejects in tool (its name and its Parameters), one Finding per
// rule and detail, in schema order. An empty result means the API is expected to accept the
// tool as is.
func Lint(tool bridge.Tool, target Target) []Finding {
	var out []Finding
	if !validNameFor(tool.Name, target) {
		out = append(out, Finding{Target: target, Rule: RuleName, Count: 1, Detail: fmt.Sprintf("%q", tool.Name)})
	}
	return append(out, LintSchema(tool.Parameters, target)...)
}

// LintSchema is Lint for a parameters schema alone.
func LintSchema(schema json.RawMessage, target Target) []Finding {
	v, err := decode(schema)
	if err != nil {
		return []Finding{{Target: target, Rule: RuleSchemaObject, Count: 1, Detail: "not valid JSON: " + err.Error()}}
	}
	root, ok := v.(*object)
	if !ok {
		return []Finding{{Target: target, Rule: RuleSchemaObject, Count: 1, Detail: "not a JSON object"}}
	}
	return lintTree(root, target)
}

func lintTree(root *object, target Target) []Finding {
	l := &linter{target: target, index: map[string]int{}}
	l.root(root)
	walkSchemas(root, "", func(n *object, ptr string, in position) { l.node(n, ptr, in) })
	if target == Anthropic {
		if err := checkDraft202012(root); err != "" {
			l.add(RuleDraft202012, "", err)
		}
	}
	if target == OpenAIStrict {
		l.limits(root)
	}
	return l.out
}

func validNameFor(name string, t Target) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case r >= '0' && r <= '9', r == '-':
			if t == Gemini || t == GeminiParameters {
				if i == 0 {
					return false
				}
			}
		case r == '.' || r == ':':
			if t != Gemini && t != GeminiParameters || i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

type linter struct {
	target Target
	out    []Finding
	index  map[string]int // rule+detail → position in out
}

func (l *linter) add(rule, ptr, detail string) {
	if !appliesTo(rule, l.target) {
		return
	}
	key := rule + "\x00" + detail
	if i, ok := l.index[key]; ok {
		l.out[i].Count++
		return
	}
	l.index[key] = len(l.out)
	l.out = append(l.out, Finding{Target: l.target, Rule: rule, Path: ptr, Count: 1, Detail: detail})
}

func (l *linter) root(root *object) {
	typ, hasType := root.get("type")
	switch {
	case !hasType:
		l.add(RuleRootType, "", `no "type"`)
	case typ != "object":
		l.add(RuleRootType, "", fmt.Sprintf(`"type" is %s`, compact(typ)))
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if _, ok := root.get(k); ok {
			l.add(RuleRootCombinator, "", k)
		}
	}
	if l.target == OpenAI || l.target == OpenAIStrict {
		for _, k := range []string{"enum", "not"} {
			if _, ok := root.get(k); ok {
				l.add(RuleRootCombinator, "", k)
			}
		}
	}
}

// Gemini's Schema object: every field it defines (google.ai.generativelanguage Schema).
var geminiFields = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "maxItems": true, "minItems": true, "properties": true, "required": true,
	"minProperties": true, "maxProperties": true, "minLength": true, "maxLength": true,
	"pattern": true, "example": true, "anyOf": true, "propertyOrdering": true, "default": true,
	"items": true, "minimum": true, "maximum": true,
}

var geminiTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true, "null": true}

// Keywords OpenAI documents as not supported in strict mode.
var strictUnsupported = map[string]bool{
	"minLength": true, "maxLength": true, "patternProperties": true, "unevaluatedProperties": true,
	"propertyNames": true, "minProperties": true, "maxProperties": true, "unevaluatedItems": true,
	"contains": true, "minContains": true, "maxContains": true, "uniqueItems": true, "allOf": true,
	"oneOf": true, "not": true, "if": true, "then": true, "else": true, "dependentRequired": true,
	"dependentSchemas": true, "dependencies": true, "additionalItems": true,
}

var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

func (l *linter) node(n *object, ptr string, in position) {
	types := typeSet(n)
	// References.
	if ref, ok := n.str("$ref"); ok {
		if strings.HasPrefix(ref, "#") {
			l.add(RuleLocalRef, ptr, `"$ref"`)
		} else {
			l.add(RuleExternalRef, ptr, redact.URL(ref))
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if _, ok := n.get(k); ok && ptr == "" {
			l.add(RuleLocalRef, ptr, fmt.Sprintf("%q", k))
		}
	}
	// Arrays.
	if types["array"] {
		if _, ok := n.get("items"); !ok {
			l.add(RuleArrayItems, ptr, `"type": "array" without "items"`)
		}
	}
	switch l.target {
	case GeminiParameters:
		l.gemini(n, ptr, in, types)
	case OpenAIStrict:
		l.strict(n, ptr, types)
	}
}

func (l *linter) gemini(n *object, ptr string, in position, types map[string]bool) {
	for _, k := range n.keys {
		if !geminiFields[k] && k != "$ref" && k != "$defs" && k != "definitions" {
			l.add(RuleGeminiField, pointer(ptr, k), fmt.Sprintf("%q", k))
		}
	}
	typ, hasType := n.get("type")
	if _, isList := typ.([]any); isList {
		l.add(RuleGeminiTypeList, ptr, compact(typ))
	} else if s, ok := typ.(string); ok && !geminiTypes[s] {
		l.add(RuleGeminiTypeList, ptr, fmt.Sprintf("unknown type %q", s))
	}
	_, hasAnyOf := n.get("anyOf")
	_, hasRef := n.get("$ref")
	if !hasType && !hasAnyOf && !hasRef && in.sub {
		l.add(RuleGeminiNoType, ptr, "no \"type\"")
	}
	if e, ok := n.vals["enum"].([]any); ok {
		for _, v := range e {
			if _, isStr := v.(string); !isStr {
				l.add(RuleGeminiEnum, ptr, "enum value "+compact(v))
				break
			}
		}
	}
	if types["object"] {
		if p := n.obj("properties"); p == nil || p.len() == 0 {
			l.add(RuleGeminiEmptyObject, ptr, "object without properties")
		}
	}
	if hasType && !types["object"] {
		for _, k := range []string{"properties", "required"} {
			if _, ok := n.get(k); ok {
				l.add(RuleGeminiNotObject, pointer(ptr, k), fmt.Sprintf("%q on %s", k, compact(typ)))
			}
		}
	}
	if f, ok := n.str("format"); ok && types["string"] && f != "enum" && f != "date-time" {
		l.add(RuleGeminiFormat, pointer(ptr, "format"), fmt.Sprintf("%q", f))
	}
}

func (l *linter) strict(n *object, ptr string, types map[string]bool) {
	for _, k := range n.keys {
		if strictUnsupported[k] {
			l.add(RuleStrictKeyword, pointer(ptr, k), fmt.Sprintf("%q", k))
		}
	}
	props := n.obj("properties")
	if types["object"] || props != nil {
		if ap, ok := n.get("additionalProperties"); !ok || ap != false {
			if props == nil {
				l.add(RuleStrictAdditional, ptr, "an open object (no properties, any keys), which strict mode cannot express")
			} else {
				l.add(RuleStrictAdditional, ptr, `no "additionalProperties": false`)
			}
		}
		if props != nil {
			req := requiredSet(n)
			for _, k := range props.keys {
				if !req[k] {
					l.add(RuleStrictRequired, pointer(pointer(ptr, "properties"), k), "optional property")
				}
			}
		}
	}
	_, hasType := n.get("type")
	_, hasAnyOf := n.get("anyOf")
	_, hasEnum := n.get("enum")
	_, hasConst := n.get("const")
	_, hasRef := n.get("$ref")
	if !hasType && !hasAnyOf && !hasEnum && !hasConst && !hasRef && props == nil {
		l.add(RuleStrictType, ptr, `no "type"`)
	}
	if f, ok := n.str("format"); ok && !strictFormats[f] {
		l.add(RuleStrictFormat, pointer(ptr, "format"), fmt.Sprintf("%q", f))
	}
}

// limits checks OpenAI strict's size limits.
func (l *linter) limits(root *object) {
	var props, enums, depth int
	walkSchemas(root, "", func(n *object, ptr string, in position) {
		if p := n.obj("properties"); p != nil {
			props += p.len()
		}
		if e, ok := n.vals["enum"].([]any); ok {
			enums += len(e)
		}
		depth = max(depth, in.objDepth)
	})
	if depth > 10 {
		l.add(RuleStrictLimits, "", fmt.Sprintf("%d levels of nested objects (limit 10)", depth))
	}
	if props > 5000 {
		l.add(RuleStrictLimits, "", fmt.Sprintf("%d properties (limit 5000)", props))
	}
	if enums > 1000 {
		l.add(RuleStrictLimits, "", fmt.Sprintf("%d enum values (limit 1000)", enums))
	}
}

// typeSet returns the types a schema's "type" names (a string or a list).
func typeSet(n *object) map[string]bool {
	out := map[string]bool{}
	switch t := n.vals["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

func requiredSet(n *object) map[string]bool {
	out := map[string]bool{}
	if r, ok := n.vals["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// position says where a subschema sits.
type position struct {
	sub      bool // not the root
	objDepth int  // object schemas from the root down to here, this one included
}

// Subschema keywords by shape.
var (
	subSchema    = []string{"additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems"}
	subSchemaMap = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	subSchemaArr = []string{"anyOf", "oneOf", "allOf", "prefixItems", "items"}
)

// walkSchemas calls fn for every schema object in root, parents first, keys in document
// order, with a depth bound.
func walkSchemas(root *object, ptr string, fn func(n *object, ptr string, in position)) {
	var walk func(n *object, ptr string, in position, depth int)
	walk = func(n *object, ptr string, in position, depth int) {
		if depth > maxDepth {
			return
		}
		if n.obj("properties") != nil || typeSet(n)["object"] {
			in.objDepth++
		}
		fn(n, ptr, in)
		child := in
		child.sub = true
		for _, k := range n.keys {
			v := n.vals[k]
			switch {
			case slices.Contains(subSchemaMap, k):
				m, ok := v.(*object)
				if !ok {
					continue
				}
				for _, name := range m.keys {
					if s, ok := m.vals[name].(*object); ok {
						walk(s, pointer(pointer(ptr, k), name), child, depth+1)
					}
				}
			case slices.Contains(subSchemaArr, k):
				if a, ok := v.([]any); ok {
					for i, e := range a {
						if s, ok := e.(*object); ok {
							walk(s, pointer(ptr, k)+fmt.Sprintf("/%d", i), child, depth+1)
						}
					}
					continue
				}
				fallthrough
			case slices.Contains(subSchema, k):
				if s, ok := v.(*object); ok {
					walk(s, pointer(ptr, k), child, depth+1)
				}
			}
		}
	}
	walk(root, ptr, position{}, 0)
}

// compact renders a small JSON value for a message, cut at 60 bytes.
func compact(v any) string {
	return redact.Clip(string(encode(v)), 60)
}

// Summary counts findings per rule, for reports: "strict-required ×12, array-items ×1".
func Summary(fs []Finding) string {
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Rule] += f.Count
	}
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s ×%d", id, counts[id])
	}
	return strings.Join(parts, ", ")
}

// printable escapes control characters (and line and paragraph separators) in s, which
// comes from a server's schema, for terminals and logs.
func printable(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unprintable(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unprintable(r rune) bool {
	return unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
