package eino

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/eino-contrib/jsonschema"
	orderedmap "github.com/wk8/go-ordered-map/v2"
)

// maxDepth bounds the nesting of subschemas converted into Eino's type; deeper ones are
// kept whole in the parent's Extras (as decoded JSON), so nothing is lost but the type.
const maxDepth = 64

// Keywords of jsonschema.Schema, by how convertSchema fills them.
var (
	oneSchema  = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames", "contentSchema"}
	listSchema = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	mapSchema  = []string{"$defs", "patternProperties", "dependentSchemas"}
	anyValue   = []string{"enum", "const", "default", "examples"} // `any` fields: decoded keeping numbers
	// plain keywords: decoded by jsonschema.Schema's own UnmarshalJSON.
	plain = []string{"$schema", "$id", "$anchor", "$ref", "$dynamicRef", "$comment", "type",
		"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
		"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
		"maxContains", "minContains", "maxProperties", "minProperties", "required",
		"dependentRequired", "format", "contentEncoding", "contentMediaType",
		"title", "description", "deprecated", "readOnly", "writeOnly"}
)

// convertSchema decodes a JSON Schema into Eino's type without losing a keyword or a
// number's spelling (see the package doc for what is lost).
func convertSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	return convert(raw, 0)
}

func convert(raw json.RawMessage, depth int) (*jsonschema.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("true")) || bytes.Equal(raw, []byte("false")) {
		s := new(jsonschema.Schema)
		return s, json.Unmarshal(raw, s)
	}
	keys, vals, err := members(raw)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	extra := func(k string, v json.RawMessage) error {
		x, err := decodeValue(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		s.Extras = put(s.Extras, k, x)
		return nil
	}
	// Plain keywords first, in one object: Schema.UnmarshalJSON sets only what it reads.
	// One that does not fit its field (draft-4's boolean exclusiveMaximum) goes to Extras.
	var plainKeys []int
	for i, k := range keys {
		if in(plain, k) {
			plainKeys = append(plainKeys, i)
		}
	}
	if err := json.Unmarshal(object(keys, vals, plainKeys), s); err != nil {
		var fit []int
		for _, i := range plainKeys {
			if json.Unmarshal(object(keys, vals, []int{i}), new(jsonschema.Schema)) == nil {
				fit = append(fit, i)
			} else if err := extra(keys[i], vals[i]); err != nil {
				return nil, err
			}
		}
		*s = jsonschema.Schema{Extras: s.Extras}
		if err := json.Unmarshal(object(keys, vals, fit), s); err != nil {
			return nil, err
		}
	}
	for i, k := range keys {
		v := vals[i]
		if in(plain, k) {
			continue
		}
		if in(anyValue, k) {
			x, err := decodeValue(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if !setAny(s, k, x) {
				s.Extras = put(s.Extras, k, x) // an enum that is not an array: kept as sent
			}
			continue
		}
		if depth >= maxDepth || !in(oneSchema, k) && !in(listSchema, k) && !in(mapSchema, k) && k != "properties" {
			if err := extra(k, v); err != nil {
				return nil, err
			}
			continue
		}
		if err := setSub(s, k, v, depth+1); err != nil {
			if !errors.Is(err, errShape) {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			// Not the shape Eino's field has (a tuple "items" array): kept as is.
			if err := extra(k, v); err != nil {
				return nil, err
			}
		}
	}
	if len(s.Extras) == 0 {
		s.Extras = nil
	}
	return s, nil
}

// errShape says a subschema keyword's value is not the shape of Eino's field.
var errShape = errors.New("not the shape of Eino's field")

func setSub(s *jsonschema.Schema, k string, v json.RawMessage, depth int) error {
	switch {
	case in(oneSchema, k):
		if !isSchema(v) {
			return errShape
		}
		sub, err := convert(v, depth)
		if err != nil {
			return err
		}
		*oneField(s, k) = sub
	case in(listSchema, k):
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return errShape
		}
		list := make([]*jsonschema.Schema, 0, len(items))
		for _, it := range items {
			if !isSchema(it) {
				return errShape
			}
			sub, err := convert(it, depth)
			if err != nil {
				return err
			}
			list = append(list, sub)
		}
		*listField(s, k) = list
	case k == "properties":
		names, subs, err := members(v)
		if err != nil {
			return errShape
		}
		props := orderedmap.New[string, *jsonschema.Schema]()
		for i, name := range names {
			if !isSchema(subs[i]) {
				return errShape
			}
			sub, err := convert(subs[i], depth)
			if err != nil {
				return fmt.Errorf("%q: %w", name, err)
			}
			props.Set(name, sub)
		}
		s.Properties = props
	default: // mapSchema
		names, subs, err := members(v)
		if err != nil {
			return errShape
		}
		m := make(map[string]*jsonschema.Schema, len(names))
		for i, name := range names {
			if !isSchema(subs[i]) {
				return errShape
			}
			sub, err := convert(subs[i], depth)
			if err != nil {
				return fmt.Errorf("%q: %w", name, err)
			}
			m[name] = sub
		}
		switch k {
		case "$defs":
			s.Definitions = m
		case "patternProperties":
			s.PatternProperties = m
		default:
			s.DependentSchemas = m
		}
	}
	return nil
}

func oneField(s *jsonschema.Schema, k string) **jsonschema.Schema {
	switch k {
	case "not":
		return &s.Not
	case "if":
		return &s.If
	case "then":
		return &s.Then
	case "else":
		return &s.Else
	case "items":
		return &s.Items
	case "contains":
		return &s.Contains
	case "additionalProperties":
		return &s.AdditionalProperties
	case "propertyNames":
		return &s.PropertyNames
	default:
		return &s.ContentSchema
	}
}

func listField(s *jsonschema.Schema, k string) *[]*jsonschema.Schema {
	switch k {
	case "allOf":
		return &s.AllOf
	case "anyOf":
		return &s.AnyOf
	case "oneOf":
		return &s.OneOf
	default:
		return &s.PrefixItems
	}
}

// setAny sets one of the `any` fields; false when v is not the field's shape.
func setAny(s *jsonschema.Schema, k string, v any) bool {
	if v == nil {
		return false // Eino's fields omit a null const or default
	}
	switch k {
	case "const":
		s.Const = v
	case "default":
		s.Default = v
	default: // enum, examples
		l, ok := v.([]any)
		if !ok {
			return false
		}
		if k == "enum" {
			s.Enum = l
		} else {
			s.Examples = l
		}
	}
	return true
}

func put(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// isSchema reports whether v is an object or a boolean, the two shapes of a schema.
func isSchema(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && (v[0] == '{' || v[0] == 't' || v[0] == 'f')
}

// members returns an object's keys and values in their order.
func members(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("a schema is an object or a boolean, not %s", kind(raw))
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		vals = append(vals, v)
	}
	return keys, vals, nil
}

func kind(raw json.RawMessage) string {
	switch raw = bytes.TrimSpace(raw); {
	case len(raw) == 0:
		return "empty"
	case raw[0] == '[':
		return "an array"
	case raw[0] == '"':
		return "a string"
	case raw[0] == 'n':
		return "null"
	default:
		return "a number"
	}
}

// object writes the members at idx as one JSON object.
func object(keys []string, vals []json.RawMessage, idx []int) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for n, i := range idx {
		if n > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(keys[i])
		b.Write(k)
		b.WriteByte(':')
		b.Write(vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// decodeValue decodes any JSON value, numbers as json.Number (written back as spelled).
func decodeValue(v json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return x, nil
}

func in(list []string, k string) bool {
	return slices.Contains(list, k)
}
