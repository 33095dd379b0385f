package schemaguard

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Most tool schemas are flat: an object with typed properties, a required list, perhaps
// additionalProperties false, string enums and length bounds. For those, a value is
// checked here by a walk over the decoded value, without the validator (about 11
// allocations and most of the validation time for {"a":40,"b":2}) and without compiling
// the schema at all until a value fails.
//
// The walk only ever accepts: a value it does not accept goes to the validator, whose verdict
// and error message are the ones returned. So the walk must never accept a value the validator
// rejects; it may reject what the validator accepts (it then only costs time). That is why it
// knows few keywords and treats every other validation keyword as "not a fast schema";
// FuzzFastAgreesWithJSONSchema checks the rule against the validator.

// fastSchema is a schema in the subset the walk handles.
type fastSchema struct {
	types      uint8 // allowed JSON types (fast* bits); 0: any
	props      map[string]*fastSchema
	required   []string
	noExtra    bool        // additionalProperties: false
	items      *fastSchema // nil: any items
	enum       []any       // strings, booleans and null only; nil: no enum
	minLen     int         // -1: none
	maxLen     int         // -1: none
	minItems   int         // -1: none
	maxItems   int         // -1: none
	hasEnum    bool
	anyElement bool // true or {}: accepts everything
}

// JSON types, as bits of fastSchema.types.
const (
	fastNull uint8 = 1 << iota
	fastBool
	fastObject
	fastArray
	fastNumber
	fastInteger
	fastString
)

var fastTypeNames = map[string]uint8{
	"null": fastNull, "boolean": fastBool, "object": fastObject, "array": fastArray,
	"number": fastNumber, "integer": fastInteger, "string": fastString,
}

// fastDrafts are the $schema values the subset allows: its keywords mean the same in each.
var fastDrafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"http://json-schema.org/draft-06/schema#":       true,
	"http://json-schema.org/draft-04/schema#":       true,
	"https://json-schema.org/draft/2020-12/schema#": true,
}

// fastAnnotations are keywords that never affect validation.
var fastAnnotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// maxFastDepth bounds the nesting of a fast schema.
const maxFastDepth = 8

// maxFastKeys bounds the members of one object the in-place walk reads: an object with more
// (a model may send any number) takes the decoded path, where keys are a map's.
const maxFastKeys = 64

// compileFast returns the fast form of a decoded schema document (decodeJSON's
// value), or nil when it is outside the subset.
func compileFast(doc any) *fastSchema {
	draft4 := false
	if m, ok := doc.(map[string]any); ok {
		draft4 = m["$schema"] == "http://json-schema.org/draft-04/schema#"
	}
	return fastFrom(doc, 0, true, draft4)
}

func fastFrom(doc any, depth int, root, draft4 bool) *fastSchema {
	if depth > maxFastDepth {
		return nil
	}
	if b, ok := doc.(bool); ok {
		if b {
			return &fastSchema{anyElement: true}
		}
		return nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	f := &fastSchema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	if len(m) == 0 {
		f.anyElement = true
		return f
	}
	for k, v := range m {
		switch {
		case fastAnnotations[k] || strings.HasPrefix(k, "x-"):
		case k == "$schema":
			s, ok := v.(string)
			if !root || !ok || !fastDrafts[s] {
				return nil
			}
		case k == "type":
			t, ok := fastTypes(v)
			if !ok {
				return nil
			}
			f.types = t
		case k == "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			f.props = make(map[string]*fastSchema, len(pm))
			for name, ps := range pm {
				p := fastFrom(ps, depth+1, false, draft4)
				if p == nil {
					return nil
				}
				f.props[name] = p
			}
		case k == "required":
			arr, ok := v.([]any)
			if !ok || (draft4 && len(arr) == 0) { // draft 4 wants at least one
				return nil
			}
			for _, r := range arr {
				s, ok := r.(string)
				if !ok || slices.Contains(f.required, s) { // the meta-schemas want them unique
					return nil
				}
				f.required = append(f.required, s)
			}
		case k == "additionalProperties":
			switch a := v.(type) {
			case bool:
				f.noExtra = !a
			case map[string]any:
				if len(a) != 0 {
					return nil
				}
			default:
				return nil
			}
		case k == "items":
			if _, isArr := v.([]any); isArr {
				return nil // a tuple in drafts before 2020-12
			}
			it := fastFrom(v, depth+1, false, draft4)
			if it == nil {
				return nil
			}
			if !it.anyElement {
				f.items = it
			}
		case k == "enum":
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 {
				return nil
			}
			for i, e := range arr {
				switch e.(type) {
				case string, bool, nil:
				default:
					return nil
				}
				if slices.Contains(arr[:i], e) { // draft 4 wants them unique
					return nil
				}
			}
			f.enum, f.hasEnum = arr, true
		case k == "minLength", k == "maxLength", k == "minItems", k == "maxItems":
			n, ok := fastCount(v)
			if !ok {
				return nil
			}
			switch k {
			case "minLength":
				f.minLen = n
			case "maxLength":
				f.maxLen = n
			case "minItems":
				f.minItems = n
			default:
				f.maxItems = n
			}
		default:
			return nil
		}
	}
	return f
}

// fastTypes decodes a type keyword: a type name or a non-empty array of distinct ones.
func fastTypes(v any) (uint8, bool) {
	switch t := v.(type) {
	case string:
		b, ok := fastTypeNames[t]
		return b, ok
	case []any:
		var bits uint8
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return 0, false
			}
			b, ok := fastTypeNames[s]
			if !ok || bits&b != 0 {
				return 0, false
			}
			bits |= b
		}
		return bits, bits != 0
	}
	return 0, false
}

// fastCount decodes a non-negative integer keyword value (written without a fraction or
// exponent).
func fastCount(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE-") {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

// accepts reports whether v (a value of DecodeArgs or ToValue) certainly matches the schema.
// false means "ask the validator".
func (f *fastSchema) accepts(v any) bool {
	if f.anyElement {
		return true
	}
	var kind uint8
	switch x := v.(type) {
	case nil:
		kind = fastNull
	case bool:
		kind = fastBool
	case string:
		kind = fastString
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(x)
			if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
				return false
			}
		}
	case json.Number:
		kind = fastNumber
		if !strings.ContainsAny(string(x), ".eE") {
			kind |= fastInteger
		}
	case map[string]any:
		kind = fastObject
		if !f.acceptsObject(x) {
			return false
		}
	case []any:
		kind = fastArray
		if (f.minItems >= 0 && len(x) < f.minItems) || (f.maxItems >= 0 && len(x) > f.maxItems) {
			return false
		}
		if f.items != nil {
			for _, e := range x {
				if !f.items.accepts(e) {
					return false
				}
			}
		}
	default:
		return false
	}
	if f.types != 0 && f.types&kind == 0 {
		return false
	}
	if f.hasEnum {
		return fastInEnum(f.enum, v)
	}
	return true
}

func (f *fastSchema) acceptsObject(m map[string]any) bool {
	for _, r := range f.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, val := range m {
		p := f.props[k]
		if p == nil {
			if f.noExtra {
				return false
			}
			continue
		}
		if !p.accepts(val) {
			return false
		}
	}
	return true
}

func fastInEnum(enum []any, v any) bool {
	for _, e := range enum {
		switch x := e.(type) {
		case string:
			if s, ok := v.(string); ok && s == x {
				return true
			}
		case bool:
			if b, ok := v.(bool); ok && b == x {
				return true
			}
		case nil:
			if v == nil {
				return true
			}
		}
	}
	return false
}

// acceptsJSON is accepts for the JSON text of a value, read in place: the arguments of a
// call are checked without decoding them. b must be valid JSON (NormalizeArgs checked it);
// anything unusual (an escaped or invalid UTF-8 string that needs measuring, a repeated
// key) is left to the decoded path by returning false.
func (f *fastSchema) acceptsJSON(b []byte) bool {
	s := fastScan{b: b}
	if !s.value(f, 0) {
		return false
	}
	return s.ws() == len(b)
}

// fastScan reads valid JSON for acceptsJSON.
type fastScan struct {
	b []byte
	i int
}

func (s *fastScan) ws() int {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i
		}
	}
	return s.i
}

// value checks the value at s.i against f (nil: any value) and moves past it.
func (s *fastScan) value(f *fastSchema, depth int) bool {
	if s.ws() >= len(s.b) || depth > maxFastDepth+1 {
		return false
	}
	if f == nil || f.anyElement {
		return s.skip()
	}
	var kind uint8
	switch c := s.b[s.i]; {
	case c == '{':
		kind = fastObject
		if !s.object(f, depth) {
			return false
		}
	case c == '[':
		kind = fastArray
		if !s.array(f, depth) {
			return false
		}
	case c == '"':
		kind = fastString
		start := s.i
		if !s.skip() {
			return false
		}
		inner := s.b[start+1 : s.i-1]
		if f.minLen >= 0 || f.maxLen >= 0 || f.hasEnum {
			if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
				return false // measured and compared on the decoded path
			}
		}
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCount(inner)
			if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
				return false
			}
		}
		if f.types != 0 && f.types&kind == 0 {
			return false
		}
		if f.hasEnum {
			for _, e := range f.enum {
				if es, ok := e.(string); ok && es == string(inner) {
					return true
				}
			}
			return false
		}
		return true
	case c == 't' || c == 'f':
		kind = fastBool
		v := c == 't'
		if !s.skip() {
			return false
		}
		if f.hasEnum && !slices.Contains(f.enum, any(v)) {
			return false
		}
	case c == 'n':
		kind = fastNull
		if !s.skip() {
			return false
		}
		if f.hasEnum && !slices.Contains(f.enum, nil) {
			return false
		}
	default:
		kind = fastNumber
		start := s.i
		if !s.skip() {
			return false
		}
		if !bytes.ContainsAny(s.b[start:s.i], ".eE") {
			kind |= fastInteger
		}
		if f.hasEnum {
			return false // enums hold no numbers
		}
	}
	if f.types != 0 && f.types&kind == 0 {
		return false
	}
	if f.hasEnum && (kind == fastObject || kind == fastArray) {
		return false
	}
	return true
}

func (s *fastScan) object(f *fastSchema, depth int) bool {
	s.i++ // {
	var buf [16][]byte
	seen := buf[:0] // the keys so far
	for {
		if s.ws() >= len(s.b) {
			return false
		}
		if s.b[s.i] == '}' {
			s.i++
			break
		}
		if s.b[s.i] == ',' {
			s.i++
			s.ws()
		}
		start := s.i
		if !s.skip() {
			return false
		}
		key := s.b[start+1 : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if len(seen) == maxFastKeys {
			return false // the repeated-key check below is quadratic: larger objects take the decoded path
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return false // a repeated key: the decoded path keeps the last
			}
		}
		seen = append(seen, key)
		if s.ws() >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		p, known := f.props[string(key)]
		if !known && f.noExtra {
			return false
		}
		if !s.value(p, depth+1) {
			return false
		}
	}
	for _, r := range f.required {
		found := false
		for _, k := range seen {
			if string(k) == r {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (s *fastScan) array(f *fastSchema, depth int) bool {
	s.i++ // [
	n := 0
	for {
		if s.ws() >= len(s.b) {
			return false
		}
		if s.b[s.i] == ']' {
			s.i++
			break
		}
		if s.b[s.i] == ',' {
			s.i++
		}
		if !s.value(f.items, depth+1) {
			return false
		}
		n++
	}
	return (f.minItems < 0 || n >= f.minItems) && (f.maxItems < 0 || n <= f.maxItems)
}

// skip moves past the value at s.i (valid JSON), however deeply nested, without recursion.
func (s *fastScan) skip() bool {
	if s.ws() >= len(s.b) {
		return false
	}
	nest := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.i >= len(s.b) {
				return false
			}
			s.i++
		case '{', '[':
			nest++
			s.i++
			continue
		case '}', ']':
			if nest == 0 {
				return false
			}
			nest--
			s.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			s.i++
			continue
		default: // a number or a literal
			for s.i < len(s.b) && !fastDelim(s.b[s.i]) {
				s.i++
			}
		}
		if nest == 0 {
			return true
		}
	}
	return false
}

func fastDelim(c byte) bool {
	switch c {
	case ',', ':', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
