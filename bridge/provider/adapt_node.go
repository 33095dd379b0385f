// This file is over 500 lines on purpose: the per-node schema rewrites of every target
// (OpenAI strict, Gemini, Gemini parameters) stay together so the targets can be compared.

package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Annotations: dropped without a note where a target does not take them, since they do not
// constrain values.
var annotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "$anchor": true, "$dynamicAnchor": true,
	"$vocabulary": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"contentEncoding": true, "contentMediaType": true, "contentSchema": true, "title": true,
	"$defs": true, "definitions": true, "markdownDescription": true,
}

// Keywords OpenAI strict mode accepts (besides type-specific formats checked separately).
var strictKeywords = map[string]bool{
	"type": true, "description": true, "title": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "enum": true, "const": true, "anyOf": true,
	"pattern": true, "format": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "minItems": true, "maxItems": true, "$ref": true,
}

// node adapts one schema object in place and, below it, every subschema; it returns the
// shape MapArguments needs.
func (ad *adapter) node(n *object, root bool, depth int) *shape {
	if depth > maxDepth {
		return nil
	}
	ad.exclusiveBooleans(n)
	switch ad.target {
	case OpenAI:
		ad.arrayItems(n)
	case OpenAIStrict:
		ad.strictKeywords(n)
		ad.inferType(n)
	case GeminiParameters:
		ad.geminiNode(n)
	}
	s := &shape{}
	for _, k := range slices.Clone(n.keys) {
		v := n.vals[k]
		switch {
		case k == "properties":
			m, ok := v.(*object)
			if !ok {
				continue
			}
			s.props = map[string]*shape{}
			for _, name := range m.keys {
				if c, ok := m.vals[name].(*object); ok {
					s.props[name] = ad.node(c, false, depth+1)
				}
			}
		case k == "anyOf":
			a, ok := v.([]any)
			if !ok {
				continue
			}
			for _, e := range a {
				if c, ok := e.(*object); ok {
					s.anyOf = append(s.anyOf, ad.node(c, false, depth+1))
				}
			}
		case k == "items":
			if c, ok := v.(*object); ok {
				s.items = ad.node(c, false, depth+1)
			} else if a, ok := v.([]any); ok {
				for _, e := range a {
					if c, ok := e.(*object); ok {
						ad.node(c, false, depth+1)
					}
				}
			}
		case slices.Contains(subSchemaMap, k):
			if m, ok := v.(*object); ok {
				for _, name := range m.keys {
					if c, ok := m.vals[name].(*object); ok {
						ad.node(c, false, depth+1)
					}
				}
			}
		case slices.Contains(subSchemaArr, k):
			if a, ok := v.([]any); ok {
				for _, e := range a {
					if c, ok := e.(*object); ok {
						ad.node(c, false, depth+1)
					}
				}
			}
		case slices.Contains(subSchema, k):
			if c, ok := v.(*object); ok {
				ad.node(c, false, depth+1)
			}
		}
	}
	if ad.target == OpenAIStrict {
		ad.strictObject(n, s)
	}
	return s
}

// exclusiveBooleans rewrites draft-4 "exclusiveMinimum": true (with "minimum") into the
// draft 2020-12 form every API expects; false is dropped.
func (ad *adapter) exclusiveBooleans(n *object) {
	for _, p := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		b, ok := n.vals[p[0]].(bool)
		if !ok {
			continue
		}
		if num, isNum := n.vals[p[1]].(json.Number); b && isNum {
			n.set(p[0], num)
			n.del(p[1])
		} else {
			n.del(p[0])
		}
		ad.note(fmt.Sprintf("draft-4 boolean %s rewritten", p[0]))
	}
}

func (ad *adapter) arrayItems(n *object) {
	if typeSet(n)["array"] {
		if _, ok := n.get("items"); !ok {
			n.set("items", newObject())
			ad.note(`"items": {} added to an array without items`)
		}
	}
}

// inferType adds the "type" a schema implies: properties → object, items → array.
func (ad *adapter) inferType(n *object) {
	if _, ok := n.get("type"); ok {
		return
	}
	if _, ok := n.get("anyOf"); ok {
		return
	}
	switch {
	case n.obj("properties") != nil:
		n.set("type", "object")
	case n.vals["items"] != nil:
		n.set("type", "array")
	default:
		e, ok := n.vals["enum"].([]any)
		if !ok || ad.target != GeminiParameters {
			return
		}
		t := enumType(e)
		if t == "" {
			return
		}
		n.set("type", t)
	}
	ad.note(`"type" added where properties or items imply it`)
}

// enumType is the one JSON type of an enum's values ("integer" when every number is
// whole), or "" when they mix types.
func enumType(e []any) string {
	t := ""
	for _, v := range e {
		var vt string
		switch x := v.(type) {
		case string:
			vt = "string"
		case bool:
			vt = "boolean"
		case json.Number:
			vt = "integer"
			if strings.ContainsAny(string(x), ".eE") {
				vt = "number"
			}
		case nil:
			continue
		default:
			return ""
		}
		switch {
		case t == "" || t == vt:
			t = vt
		case t == "integer" && vt == "number" || t == "number" && vt == "integer":
			t = "number"
		default:
			return ""
		}
	}
	return t
}

// constraintOnly reports whether every variant of a combinator only constrains (required,
// not, ...) without saying what the value is: such anyOf/oneOf lists are what Gemini and
// OpenAI strict reject as variants without a type.
func constraintOnly(branches []any) bool {
	for _, b := range branches {
		o, ok := b.(*object)
		if !ok {
			return false
		}
		for _, k := range []string{"type", "properties", "items", "enum", "const", "$ref", "anyOf", "oneOf"} {
			if _, has := o.get(k); has {
				return false
			}
		}
	}
	return len(branches) > 0
}

// dropConstraintCombinators removes anyOf/oneOf lists whose variants only constrain, noting
// what they required in the description.
func (ad *adapter) dropConstraintCombinators(n *object) []string {
	var notes []string
	for _, k := range []string{"anyOf", "oneOf"} {
		if a, ok := n.vals[k].([]any); ok && constraintOnly(a) {
			n.del(k)
			notes = append(notes, combinatorNote(k, a))
			ad.note(k + " of constraint-only variants moved into the description")
		}
	}
	return notes
}

func allStrings(a []any) bool {
	for _, e := range a {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return len(a) > 0
}

// strictKeywords removes what OpenAI strict mode does not accept, noting constraints in the
// description.
func (ad *adapter) strictKeywords(n *object) {
	describe(n, ad.dropConstraintCombinators(n))
	ad.tupleItems(n)
	if one, ok := n.get("oneOf"); ok {
		if _, both := n.get("anyOf"); !both {
			n.set("anyOf", one)
			n.del("oneOf")
			ad.note("oneOf turned into anyOf")
		}
	}
	var notes []string
	for _, k := range slices.Clone(n.keys) {
		v := n.vals[k]
		drop := !strictKeywords[k]
		if k == "format" {
			if f, ok := v.(string); !ok || !strictFormats[f] {
				drop = true
			}
		}
		if k == "additionalProperties" && v != false {
			drop = n.obj("properties") != nil // replaced by false below; a map keeps it (and stays non-strict)
			if drop && v != true {
				notes = append(notes, "other properties: "+compact(v))
			}
		}
		if !drop {
			continue
		}
		n.del(k)
		if !annotations[k] && k != "additionalProperties" {
			notes = append(notes, k+": "+compact(v))
		}
		if k != "additionalProperties" {
			ad.note(fmt.Sprintf("%q removed (OpenAI strict does not accept it)", k))
		}
	}
	describe(n, notes)
}

// strictObject makes an object schema strict: "additionalProperties": false and every
// property required, the optional ones made nullable (recorded in s for MapArguments).
func (ad *adapter) strictObject(n *object, s *shape) {
	props := n.obj("properties")
	if props == nil {
		if typeSet(n)["object"] && n.vals["additionalProperties"] == false {
			n.set("properties", newObject())
			n.set("required", []any{})
		}
		return
	}
	if n.vals["additionalProperties"] != false {
		n.set("additionalProperties", false)
		ad.note(`"additionalProperties": false set`)
	}
	req := requiredSet(n)
	all := make([]any, 0, props.len())
	for _, k := range props.keys {
		all = append(all, k)
		if req[k] {
			continue
		}
		p, ok := props.vals[k].(*object)
		if !ok {
			continue
		}
		// Strict mode has no way to leave a property out, so a null for an optional
		// property means "absent", also where the server's schema accepts null.
		if nullable(p) || acceptsNull(p) {
			if s.nulled == nil {
				s.nulled = map[string]bool{}
			}
			s.nulled[k] = true
			ad.note("optional property made required and nullable")
		}
	}
	if len(req) != len(all) || n.vals["required"] == nil {
		n.set("required", all)
	}
}

// nullable makes p also accept null, unless it already does; it reports whether it did.
func nullable(p *object) bool {
	if acceptsNull(p) {
		return false
	}
	switch t := p.vals["type"].(type) {
	case string:
		p.set("type", []any{t, "null"})
	case []any:
		p.set("type", append(t, "null"))
	default:
		if a, ok := p.vals["anyOf"].([]any); ok {
			nul := newObject()
			nul.set("type", "null")
			p.set("anyOf", append(a, nul))
			return true
		}
		_, hasEnum := p.get("enum")
		_, hasConst := p.get("const")
		if !hasEnum && !hasConst {
			return false // no type: stays as it is, the lint reports it
		}
	}
	if c, ok := p.get("const"); ok {
		p.del("const")
		p.set("enum", []any{c})
	}
	if e, ok := p.vals["enum"].([]any); ok {
		p.set("enum", append(e, nil))
	}
	return true
}

func acceptsNull(p *object) bool {
	if typeSet(p)["null"] {
		return true
	}
	if e, ok := p.vals["enum"].([]any); ok && slices.Contains(e, nil) {
		return true
	}
	if c, ok := p.get("const"); ok && c == nil {
		return true
	}
	if a, ok := p.vals["anyOf"].([]any); ok {
		for _, b := range a {
			if o, ok := b.(*object); ok && acceptsNull(o) {
				return true
			}
		}
	}
	return false
}

// geminiNode rewrites one schema into Gemini's Schema object (an OpenAPI 3.0 subset).
func (ad *adapter) geminiNode(n *object) {
	notes := ad.dropConstraintCombinators(n)
	ad.tupleItems(n)
	if one, ok := n.get("oneOf"); ok {
		if _, both := n.get("anyOf"); !both {
			n.set("anyOf", one)
			n.del("oneOf")
			ad.note("oneOf turned into anyOf")
		}
	}
	if all, ok := n.vals["allOf"].([]any); ok {
		n.del("allOf")
		if mergeProperties(n, all, true) > 0 {
			ad.note("allOf merged into one object")
		} else {
			notes = append(notes, combinatorNote("allOf", all))
			ad.note("allOf removed")
		}
	}
	ad.inferType(n)
	// "type" lists: null becomes "nullable", several types become anyOf.
	if list, ok := n.vals["type"].([]any); ok {
		var types []string
		hasNull := false
		for _, e := range list {
			switch s, _ := e.(string); s {
			case "null":
				hasNull = true
			case "":
			default:
				types = append(types, s)
			}
		}
		if hasNull {
			n.set("nullable", true)
		}
		switch len(types) {
		case 0:
			n.set("type", "null")
		case 1:
			n.set("type", types[0])
		default:
			n.del("type")
			var branches []any
			for _, t := range types {
				b := newObject()
				b.set("type", t)
				for _, k := range keywordsFor(t) {
					if v, ok := n.get(k); ok {
						b.set(k, clone(v))
					}
				}
				branches = append(branches, b)
			}
			for _, t := range types {
				for _, k := range keywordsFor(t) {
					n.del(k)
				}
			}
			n.set("anyOf", branches)
		}
		ad.note(`"type" list rewritten (nullable / anyOf)`)
	}
	if c, ok := n.get("const"); ok {
		n.del("const")
		if s, isStr := c.(string); isStr {
			n.set("enum", []any{s})
			if _, has := n.get("type"); !has {
				n.set("type", "string")
			}
			ad.note("const turned into a one-value enum")
		} else {
			notes = append(notes, "must be "+compact(c))
			ad.note("non-string const removed")
		}
	}
	if e, ok := n.vals["enum"].([]any); ok && !allStrings(e) {
		var strs []any
		hasNull := false
		for _, v := range e {
			if v == nil {
				hasNull = true
			} else if s, ok := v.(string); ok {
				strs = append(strs, s)
			}
		}
		if len(strs) == len(e)-1 && hasNull {
			n.set("enum", strs)
			n.set("nullable", true)
		} else {
			n.del("enum")
			notes = append(notes, "one of "+compact(e))
			ad.note("non-string enum moved into the description")
		}
	}
	for _, p := range [][3]string{{"exclusiveMinimum", "minimum", ">"}, {"exclusiveMaximum", "maximum", "<"}} {
		if v, ok := n.vals[p[0]].(json.Number); ok {
			n.del(p[0])
			if _, has := n.get(p[1]); !has {
				n.set(p[1], v)
			}
			notes = append(notes, p[2]+" "+string(v))
			ad.note(p[0] + " turned into " + p[1])
		}
	}
	types := typeSet(n)
	if f, ok := n.str("format"); ok && types["string"] && f != "enum" && f != "date-time" {
		n.del("format")
		notes = append(notes, "format "+f)
		ad.note("string format Gemini does not accept moved into the description")
	}
	if _, has := n.get("type"); has && !types["object"] {
		for _, k := range []string{"properties", "required"} {
			if _, ok := n.get(k); ok {
				n.del(k)
				ad.note(fmt.Sprintf("%q removed from a non-object type", k))
			}
		}
	}
	if ex, ok := n.vals["examples"].([]any); ok && len(ex) > 0 {
		if _, has := n.get("example"); !has {
			n.set("example", ex[0])
		}
	}
	for _, k := range slices.Clone(n.keys) {
		if geminiFields[k] || k == "$ref" {
			continue
		}
		v := n.vals[k]
		n.del(k)
		switch {
		case annotations[k]:
		case k == "additionalProperties":
			if o, ok := v.(*object); ok {
				notes = append(notes, "other properties: "+compact(o))
			}
		default:
			notes = append(notes, k+": "+compact(v))
		}
		ad.note(fmt.Sprintf("%q removed (Gemini parameters do not accept it)", k))
	}
	describe(n, notes)
}

// tupleItems removes tuple forms (prefixItems, an "items" list) that OpenAI strict and
// Gemini's parameters cannot express; the array is then left without "items", which the
// lint reports, so the tool falls back.
func (ad *adapter) tupleItems(n *object) {
	_, prefix := n.get("prefixItems")
	_, list := n.vals["items"].([]any)
	if !prefix && !list {
		return
	}
	if prefix && n.vals["items"] == false || list {
		n.del("items")
	}
	n.del("prefixItems")
	n.del("additionalItems")
	ad.note("tuple items removed")
}

// keywordsFor lists the keywords that apply to one JSON type, for splitting a "type" list.
func keywordsFor(t string) []string {
	switch t {
	case "object":
		return []string{"properties", "required", "minProperties", "maxProperties"}
	case "array":
		return []string{"items", "minItems", "maxItems"}
	case "string":
		return []string{"format", "pattern", "minLength", "maxLength", "enum"}
	case "number", "integer":
		return []string{"minimum", "maximum"}
	}
	return nil
}
