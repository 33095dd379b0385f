package schemaguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// Arguments are validated with github.com/google/jsonschema-go, which go-sdk links anyway
// (a second validator cost a bridge-only program about half a megabyte with the x/text
// tables of its messages). That library knows drafts 7 and 2020-12 and treats format as an
// annotation, so a schema is translated before it is resolved, to keep the verdicts the
// bridge gave before (TestVerdicts, TestCorpusVerdicts):
//   - draft 4 and 6 become draft 7 (draft 4's id is $id; its boolean exclusiveMinimum and
//     exclusiveMaximum become the numeric form), 2019-09 becomes 2020-12 (its tuple items
//     are prefixItems); $recursiveRef, which 2020-12 replaced, does not compile;
//   - in drafts 4 to 7 format is an assertion: the formats tool servers use (date-time,
//     date, time, uuid, uri, email, ipv4) become a pattern the string must match; other
//     formats stay annotations (the server still checks them);
//   - a $schema naming no known draft does not compile, as before.
// The library reports the first failure with the chain of schemas it was found in;
// describeFailure turns that into "at <argument path>: <message> (rule <keyword path>)".
// Known differences from the validator before: one failure is reported (with each
// alternative of an anyOf or oneOf), not every one; a member the failure chain does not name
// is found by its value, else reads *; a number beyond float64 (1e400) is no number to the
// library; metaCheck and the library catch the meta-schema violations servers make, not
// every one; formats other than those above, and the calendar's leap years, go unchecked;
// 2019-09's $recursiveAnchor does not compile.

// Compiled is a compiled schema (see Compile).
type Compiled struct {
	rs *jsonschema.Resolved
}

const (
	draft07URI   = "http://json-schema.org/draft-07/schema#"
	draft2020URI = "https://json-schema.org/draft/2020-12/schema"
)

// drafts maps each $schema value the bridge accepts to its draft year (4, 6, 7, 2019, 2020).
var drafts = map[string]int{
	"http://json-schema.org/draft-04/schema#":       4,
	"http://json-schema.org/draft-04/schema":        4,
	"http://json-schema.org/draft-06/schema#":       6,
	"http://json-schema.org/draft-06/schema":        6,
	"http://json-schema.org/draft-07/schema#":       7,
	"http://json-schema.org/draft-07/schema":        7,
	"https://json-schema.org/draft-07/schema#":      7,
	"https://json-schema.org/draft/2019-09/schema":  2019,
	"https://json-schema.org/draft/2019-09/schema#": 2019,
	"https://json-schema.org/draft/2020-12/schema":  2020,
	"https://json-schema.org/draft/2020-12/schema#": 2020,
}

// Compile compiles a tool's inputSchema for argument validation. The schema's own
// $schema picks the draft (4 through 2020-12); the default is 2020-12.
func Compile(schema json.RawMessage) (*Compiled, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, err
	}
	return compileDoc(doc)
}

// compileDoc compiles a decoded schema (see Compile). doc is not changed.
func compileDoc(doc any) (*Compiled, error) {
	draft := 2020
	if m, ok := doc.(map[string]any); ok {
		if s, ok := m["$schema"]; ok {
			str, _ := s.(string)
			d, known := drafts[str]
			if !known {
				return nil, fmt.Errorf("$schema %q is not a JSON Schema draft the bridge knows (4, 6, 7, 2019-09, 2020-12)", redact.Line(str, 100))
			}
			draft = d
		}
	}
	t, err := translate(doc, draft, "")
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the schema does not decode: %w", err)
	}
	exactNumbers(&s, t)
	rs, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: rootBase, Loader: refuseExternal})
	if err != nil {
		return nil, err
	}
	return &Compiled{rs: rs}, nil
}

// exactNumbers sets the const and enum values of s (and its subschemas) from doc, the
// document s was decoded from, where they hold a number float64 does not represent exactly:
// the library decodes them as float64, and 9007199254740993 would then equal
// 9007199254740992.
func exactNumbers(s *jsonschema.Schema, doc any) {
	m, ok := doc.(map[string]any)
	if s == nil || !ok {
		return
	}
	if c, ok := m["const"]; ok && inexact(c) {
		s.Const = &c
	}
	if e, ok := m["enum"].([]any); ok && inexact(e) {
		s.Enum = e
	}
	one := map[string]*jsonschema.Schema{
		"not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "items": s.Items,
		"additionalItems": s.AdditionalItems, "additionalProperties": s.AdditionalProperties,
		"contains": s.Contains, "propertyNames": s.PropertyNames, "unevaluatedItems": s.UnevaluatedItems,
		"unevaluatedProperties": s.UnevaluatedProperties, "contentSchema": s.ContentSchema,
	}
	for k, sub := range one {
		exactNumbers(sub, m[k])
	}
	arrays := map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems, "items": s.ItemsArray}
	for k, subs := range arrays {
		if d, ok := m[k].([]any); ok && len(d) == len(subs) {
			for i, sub := range subs {
				exactNumbers(sub, d[i])
			}
		}
	}
	maps := map[string]map[string]*jsonschema.Schema{
		"properties": s.Properties, "patternProperties": s.PatternProperties, "$defs": s.Defs,
		"definitions": s.Definitions, "dependentSchemas": s.DependentSchemas, "dependencies": s.DependencySchemas,
	}
	for k, subs := range maps {
		if d, ok := m[k].(map[string]any); ok {
			for name, sub := range subs {
				exactNumbers(sub, d[name])
			}
		}
	}
}

// inexact reports whether v holds a number (json.Number) that float64 does not represent
// exactly.
func inexact(v any) bool {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return true
		}
		r, ok := new(big.Rat).SetString(string(x))
		return !ok || new(big.Rat).SetFloat64(f).Cmp(r) != 0
	case []any:
		return slices.ContainsFunc(x, inexact)
	case map[string]any:
		for _, e := range x {
			if inexact(e) {
				return true
			}
		}
	}
	return false
}

// refuseExternal is the only loader the resolver gets: a server's schema must never make the
// client read a local file or fetch a URL.
func refuseExternal(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("external $ref %q refused: schemas from MCP servers may only use internal references", redact.Line(u.Redacted(), 200))
}

// translate returns a copy of the schema v (at a schema position) in the library's drafts:
// see the comment at the top of this file.
func translate(v any, draft int, ptr string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil // a boolean schema, or a value the resolver reports
	}
	if err := metaCheck(m, draft); err != nil {
		if ptr == "" {
			ptr = "/"
		}
		return nil, fmt.Errorf("at %s: %w", redact.Line(ptr, 200), err)
	}
	out := make(map[string]any, len(m)+1)
	for k, val := range m {
		var err error
		switch {
		case oneSchemaKeywords[k] && !(k == "items" && isArray(val)):
			val, err = translate(val, draft, ptr+"/"+k)
		case schemaArrayKeywords[k]:
			if arr, ok := val.([]any); ok {
				val, err = translateAll(arr, draft, ptr+"/"+k)
			}
		case schemaMapKeywords[k]:
			if mm, ok := val.(map[string]any); ok {
				nm := make(map[string]any, len(mm))
				for name, sub := range mm {
					if nm[name], err = translate(sub, draft, ptr+"/"+k+"/"+name); err != nil {
						break
					}
				}
				val = nm
			}
		}
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	switch {
	case draft == 4:
		if id, ok := out["id"].(string); ok {
			delete(out, "id")
			out["$id"] = id
		}
		for _, kw := range [2][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			ex, ok := out[kw[0]].(bool)
			if !ok {
				continue
			}
			delete(out, kw[0])
			if bound, has := out[kw[1]]; ex && has {
				delete(out, kw[1])
				out[kw[0]] = bound
			}
		}
	case draft == 2019:
		if _, ok := out["$recursiveAnchor"]; ok {
			return nil, errors.New("$recursiveAnchor (draft 2019-09) is not supported")
		}
		if r, ok := out["$recursiveRef"]; ok { // without $recursiveAnchor, it is $ref
			delete(out, "$recursiveRef")
			out["$ref"] = r
		}
		if arr, ok := out["items"].([]any); ok {
			out["prefixItems"] = arr
			delete(out, "items")
			if ai, ok := out["additionalItems"]; ok {
				out["items"] = ai
				delete(out, "additionalItems")
			}
		}
	}
	if ptr == "" {
		if draft <= 7 {
			out["$schema"] = draft07URI
		} else {
			out["$schema"] = draft2020URI
		}
	}
	if f, ok := out["format"].(string); ok && draft <= 7 {
		if p, ok := formatPatterns[f]; ok {
			allOf, _ := out["allOf"].([]any)
			out["allOf"] = append(slices.Clip(allOf), map[string]any{"pattern": p})
		}
	}
	return out, nil
}

func translateAll(arr []any, draft int, ptr string) ([]any, error) {
	out := make([]any, len(arr))
	for i, sub := range arr {
		var err error
		if out[i], err = translate(sub, draft, ptr+"/"+strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// metaCheck finds the meta-schema violations the library does not report itself (it
// reports a keyword of the wrong JSON type, a pattern that does not compile and an
// unresolvable $ref): a schema with one does not compile, as before.
func metaCheck(m map[string]any, draft int) error {
	for k, v := range m {
		switch k {
		case "enum":
			if arr, ok := v.([]any); ok && len(arr) == 0 && draft <= 7 {
				return errors.New("enum has no values")
			}
		case "type":
			names, ok := v.([]any)
			if s, isStr := v.(string); isStr {
				names, ok = []any{s}, true
			}
			if ok && len(names) == 0 {
				return errors.New("type lists no types")
			}
			for i, n := range names {
				s, _ := n.(string)
				if fastTypeNames[s] == 0 {
					return fmt.Errorf("type %q is not a JSON Schema type", redact.Line(fmt.Sprint(n), 50))
				}
				if slices.Contains(names[:i], n) {
					return fmt.Errorf("type lists %q twice", s)
				}
			}
		case "required":
			arr, _ := v.([]any)
			if len(arr) == 0 && draft == 4 && isArray(v) {
				return errors.New("required is empty (draft 4 wants at least one name)")
			}
			for i, n := range arr {
				if slices.Contains(arr[:i], n) {
					return fmt.Errorf("required lists %q twice", redact.Line(fmt.Sprint(n), 50))
				}
			}
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
			if n, ok := v.(json.Number); ok && strings.HasPrefix(string(n), "-") {
				return fmt.Errorf("%s is negative", k)
			}
		case "multipleOf":
			if n, ok := v.(json.Number); ok {
				if f, err := n.Float64(); err == nil && f <= 0 {
					return errors.New("multipleOf is not positive")
				}
			}
		case "allOf", "anyOf", "oneOf":
			if arr, ok := v.([]any); ok && len(arr) == 0 {
				return fmt.Errorf("%s is empty", k)
			}
		}
	}
	return nil
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

// formatPatterns are the formats asserted in drafts 4 to 7, as the patterns that stand for
// them; formatNames names a pattern in a failure. date-time and date check each month's
// days (February to the 29th in any year).
var (
	datePattern    = `[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-9]))`
	timePattern    = `(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])`
	octet          = `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	formatPatterns = map[string]string{
		"date-time": `^` + datePattern + `[Tt]` + timePattern + `$`,
		"date":      `^` + datePattern + `$`,
		"time":      `^` + timePattern + `$`,
		"uuid":      `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`,
		"uri":       `^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20"<>\\^` + "`" + `{|}]*$`,
		"email":     `^[^@\s]+@[^@\s.][^@\s]*$`,
		"ipv4":      `^` + octet + `(?:\.` + octet + `){3}$`,
	}
	formatNames = func() map[string]string {
		m := make(map[string]string, len(formatPatterns))
		for f, p := range formatPatterns {
			m[strconv.Quote(p)] = f
		}
		return m
	}()
)

// validateInstance checks a decoded value (DecodeArgs's) against a compiled schema.
func validateInstance(sch *Compiled, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil { // the library asserts its invariants by panicking
			err = fmt.Errorf("%w: the validator failed: %v", ErrInvalidArguments, r)
		}
	}()
	lib := libValue(inst)
	verr := sch.rs.Validate(lib)
	if verr == nil {
		return nil
	}
	text := verr.Error()
	// without says whether the value fails as it does now with member key of the object at
	// path left out: if not, that member is the one failing.
	without := func(path []string, key string) bool {
		cp := libValue(lib) // a copy
		obj, ok := at(cp, path).(map[string]any)
		if !ok {
			return true
		}
		delete(obj, key)
		err := sch.rs.Validate(cp)
		return err != nil && err.Error() == text
	}
	msgs := describeFailure(text, lib, without)
	const maxMsgs = 8
	if len(msgs) > maxMsgs {
		msgs = append(msgs[:maxMsgs], fmt.Sprintf("and %d more", len(msgs)-maxMsgs))
	}
	return fmt.Errorf("%w: %s", ErrInvalidArguments, strings.Join(msgs, "; "))
}

// libValue returns a copy of DecodeArgs's value in the library's terms: json.Number (a
// string to the library) becomes an int64 when it is an integer that fits, else a float64; a
// number beyond float64 stays a json.Number, which the library's type keyword takes for a
// string.
func libValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && !math.IsInf(f, 0) {
			if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f)
			}
			return f
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = libValue(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = libValue(e)
		}
		return a
	}
	return v
}

// describeFailure turns the library's error text into failures for the model, each "at
// <argument path>: <message> (rule <keyword path>)". The text is a chain of "validating
// <schema path>: " prefixes and a message; anyOf and oneOf add a line per branch.
func describeFailure(text string, inst any, without func(path []string, key string) bool) []string {
	lines := strings.Split(text, "\n")
	var out []string
	var walk func(i int, chain []string) int
	walk = func(i int, chain []string) int {
		line := strings.TrimSpace(lines[i])
		for {
			rest, ok := strings.CutPrefix(line, "validating ")
			if !ok {
				break
			}
			path, after, found := strings.Cut(rest, ": ")
			if !found {
				break
			}
			chain = append(chain, path)
			line = after
		}
		kw, msg, _ := strings.Cut(line, ": ")
		if msg == "" {
			kw, msg = "", line
		}
		switch kw {
		case "anyOf", "oneOf":
			if strings.HasPrefix(msg, "did not validate against any") {
				msg = "no alternative matches"
			} else if strings.HasPrefix(msg, "validated against both") {
				msg = "more than one alternative matches"
			}
		case "pattern":
			for q, f := range formatNames {
				if value, ok := strings.CutSuffix(msg, " does not match regular expression "+q); ok {
					kw, msg = "format", value+" is not a valid "+f
				}
			}
		}
		out = append(out, failureLine(chain, kw, msg, inst, without))
		i++
		if kw == "anyOf" || kw == "oneOf" { // each alternative's failure follows
			for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "validating ") && len(out) < 16 {
				i = walk(i, slices.Clip(chain))
			}
		}
		return i
	}
	for i := 0; i < len(lines); {
		i = walk(i, nil)
	}
	return out
}

// tidyMessage rewords the library's messages that read worse than the ones before (which
// the model and tests know): type mismatches, missing and unexpected properties, a false
// schema, and bounds printed as %f.
func tidyMessage(kw, msg string) (string, string) {
	switch kw {
	case "type":
		if i := strings.LastIndex(msg, " has type "); i >= 0 {
			got, want, ok := strings.Cut(msg[i+len(" has type "):], ", want ")
			if ok {
				want = strings.TrimPrefix(want, "one of ")
				return kw, "got " + strings.Trim(got, `"`) + ", want " + strings.Trim(want, `"`)
			}
		}
	case "required":
		if m, ok := strings.CutPrefix(msg, "missing properties: "); ok {
			names := strings.Trim(m, "[]")
			if n, err := strconv.Unquote(names); err == nil { // one name: the wording before
				return kw, "missing property '" + n + "'"
			}
			return kw, "missing properties " + names
		}
	case "minLength", "maxLength":
		// "<quoted> contains N Unicode code points, fewer than M": the wording before
		if _, rest, ok := strings.Cut(msg, " contains "); ok {
			if n, bound, ok := strings.Cut(rest, " Unicode code points, "); ok {
				if i := strings.LastIndex(bound, " "); i >= 0 {
					return kw, kw + ": got " + n + ", want " + bound[i+1:]
				}
			}
		}
	case "not":
		if strings.HasPrefix(msg, "validated against") {
			return kw, "the value is not allowed here"
		}
	case "":
		if m, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
			return "additionalProperties", "additional properties " + strings.Trim(m, "[]") + " are not allowed"
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		// "<rational> is less than <%f>"
		first, rest, _ := strings.Cut(msg, " ")
		if r, ok := new(big.Rat).SetString(first); ok {
			if r.IsInt() {
				first = r.Num().String()
			} else {
				f, _ := r.Float64()
				first = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		if i := strings.LastIndex(rest, " "); i >= 0 {
			if f, err := strconv.ParseFloat(rest[i+1:], 64); err == nil {
				fmtc := byte('g')
				if f == math.Trunc(f) && math.Abs(f) < 1e21 {
					fmtc = 'f'
				}
				rest = rest[:i+1] + strconv.FormatFloat(f, fmtc, -1, 64)
			}
		}
		return kw, first + " " + rest
	case "contains":
		return kw, "no item matches the contains schema"
	}
	if name, ok := strings.CutPrefix(kw, "dependentRequired["); ok {
		name = strings.TrimSuffix(name, "]")
		if n, err := strconv.Unquote(name); err == nil {
			name = n
		}
		return "dependentRequired/" + name, "missing properties " + strings.Trim(strings.TrimPrefix(msg, "missing properties "), "[]")
	}
	return kw, msg
}

// failureLine words one failure found through chain (schema paths, outermost first) in the
// value inst.
func failureLine(chain []string, kw, msg string, value any, without func([]string, string) bool) string {
	var segs, segs0 []string // the argument path; "*" where the chain does not say which member
	prev := ""
	for _, p := range chain {
		if !strings.HasPrefix(prev, "/") {
			prev = "" // the root, named by its $id or "root"
		}
		if rel, ok := strings.CutPrefix(p, prev+"/"); ok && strings.HasPrefix(p, "/") {
			segs := strings.Split(rel, "/")
			path := segs[:0:0]
			for k := 0; k < len(segs); k++ {
				switch segs[k] {
				case "properties", "dependentSchemas", "dependencies":
					if k+1 < len(segs) {
						if segs[k] == "properties" {
							path = append(path, segs[k+1])
						}
						k++
					}
				case "prefixItems":
					if k+1 < len(segs) {
						path = append(path, segs[k+1])
						k++
					}
				case "items":
					if k+1 < len(segs) && isIndex(segs[k+1]) { // draft 7's tuple
						path = append(path, segs[k+1])
						k++
					} else {
						path = append(path, "*")
					}
				case "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "contains":
					path = append(path, "*")
				case "patternProperties":
					path = append(path, "*")
					k++
				case "allOf", "anyOf", "oneOf":
					k++
				}
			}
			segs0 = append(segs0, path...)
		}
		prev = p
	}
	segs = segs0
	loc := "/" + strings.Join(members(value, segs, msg, without), "/")
	kw, msg = tidyMessage(kw, msg)
	rule := ""
	if len(chain) > 0 {
		if last := chain[len(chain)-1]; strings.HasPrefix(last, "/") {
			rule = last[1:]
		}
		if kw == "format" { // the allOf translate added for the format's pattern
			if i := strings.LastIndex(rule, "allOf/"); i >= 0 && isIndex(rule[i+len("allOf/"):]) {
				rule = strings.TrimSuffix(rule[:i], "/")
			}
		}
	}
	if kw != "" {
		if rule != "" {
			rule += "/"
		}
		rule += kw
	}
	msg = redact.Line(msg, 200)
	if rule == "" {
		return fmt.Sprintf("at %s: %s", loc, msg)
	}
	return fmt.Sprintf("at %s: %s (rule %s)", loc, msg, rule)
}

// members fills in each "*" of path (a member the chain does not name): the member whose
// value at the rest of the path is the one msg starts with (the library's messages start
// with the failing value), else the only member there is, else (the last "*" of an object)
// the one member without which the value no longer fails this way; "*" stays when none
// says.
func members(v any, path []string, msg string, without func([]string, string) bool) []string {
	if got, ok := findMember(v, path, msg, true); ok {
		return got
	}
	if got, ok := findMember(v, path, msg, false); ok {
		return got
	}
	i := slices.Index(path, "*")
	if i < 0 || slices.Contains(path[i+1:], "*") {
		return path
	}
	obj, ok := at(v, path[:i]).(map[string]any)
	if !ok || len(obj) > maxFastKeys {
		return path
	}
	var found []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !without(path[:i], k) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		return path
	}
	return slices.Concat(path[:i], []string{found[0]}, path[i+1:])
}

// at returns the member of v at path (object keys and array indexes), or nil.
func at(v any, path []string) any {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func findMember(v any, path []string, msg string, byValue bool) ([]string, bool) {
	if len(path) == 0 {
		return nil, !byValue || strings.HasPrefix(msg, fmt.Sprint(v)+" ")
	}
	var keys []string
	var elems []any
	switch x := v.(type) {
	case map[string]any:
		if path[0] != "*" {
			rest, ok := findMember(x[path[0]], path[1:], msg, byValue)
			return append([]string{path[0]}, rest...), ok
		}
		keys = slices.Sorted(maps.Keys(x))
		for _, k := range keys {
			elems = append(elems, x[k])
		}
	case []any:
		if path[0] != "*" {
			i, err := strconv.Atoi(path[0])
			if err != nil || i < 0 || i >= len(x) {
				return path, false
			}
			rest, ok := findMember(x[i], path[1:], msg, byValue)
			return append([]string{path[0]}, rest...), ok
		}
		for i := range x {
			keys = append(keys, strconv.Itoa(i))
		}
		elems = x
	default:
		return path, false
	}
	if !byValue && len(elems) != 1 {
		return path, false
	}
	for i, e := range elems {
		if rest, ok := findMember(e, path[1:], msg, byValue); ok {
			return append([]string{keys[i]}, rest...), true
		}
	}
	return path, false
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// decodeJSON decodes one JSON document with numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil || !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}
