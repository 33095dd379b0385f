package schemaguard

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Models often send null for an optional argument they mean to leave out (OpenAI's strict
// mode always does: every property is required there, optional ones made nullable). A
// server whose schema does not accept null would refuse the call. So before validation and
// the call, the Handler drops a top-level argument that is null when its property is not
// required and its schema does not accept null. A null the schema accepts is kept, and a null
// for a required property is left for validation to refuse.

// NullPolicy holds, per tool, the top-level properties whose null the Handler drops; it is
// derived from the inputSchema on the first call that sends a null. The zero value is ready
// to use; it must not be copied after first use.
type NullPolicy struct {
	once sync.Once
	drop map[string]bool
}

// MaxNullDepth bounds the schema nesting acceptsNull looks through.
const MaxNullDepth = 16

// Drop returns args without the top-level null members that schema (the tool's inputSchema,
// the same every call) lets the Handler drop, and the names dropped. args is a valid JSON
// object; when nothing is dropped it is returned unchanged (bytes and key order kept), as
// are the members that stay. A nil policy drops nothing.
func (p *NullPolicy) Drop(schema, args json.RawMessage) (json.RawMessage, []string) {
	if p == nil || !bytes.Contains(args, []byte("null")) {
		return args, nil
	}
	p.once.Do(func() { p.drop = droppableNulls(schema) })
	if len(p.drop) == 0 {
		return args, nil
	}
	members, ok := objectMembers(args)
	if !ok {
		return args, nil
	}
	var dropped []string
	kept := members[:0]
	for _, m := range members {
		if p.drop[m.key] && string(bytes.TrimSpace(m.value)) == "null" {
			dropped = append(dropped, m.key)
			continue
		}
		kept = append(kept, m)
	}
	if len(dropped) == 0 {
		return args, nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.rawKey)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), dropped
}

// droppableNulls returns the top-level properties of schema that are not required and
// whose schema does not accept null.
func droppableNulls(schema json.RawMessage) map[string]bool {
	var s struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	required := make(map[string]bool, len(s.Required))
	for _, r := range s.Required {
		required[r] = true
	}
	drop := map[string]bool{}
	for name, ps := range s.Properties {
		if !required[name] && !acceptsNull(ps, 0) {
			drop[name] = true
		}
	}
	return drop
}

// acceptsNull reports whether JSON Schema s accepts null. When that cannot be told without
// resolving references or evaluating conditionals, it says yes: the null is then kept, and
// validation decides.
func acceptsNull(s any, depth int) bool {
	switch s := s.(type) {
	case bool:
		return s
	case map[string]any:
		if depth > MaxNullDepth {
			return true
		}
		for _, k := range []string{"$ref", "$dynamicRef", "not", "if"} {
			if _, ok := s[k]; ok {
				return true
			}
		}
		if n, ok := s["nullable"].(bool); ok && n { // OpenAPI's spelling
			return true
		}
		if c, ok := s["const"]; ok && c != nil {
			return false
		}
		if e, ok := s["enum"].([]any); ok && !containsNil(e) {
			return false
		}
		switch t := s["type"].(type) {
		case string:
			if t != "null" {
				return false
			}
		case []any:
			if !containsString(t, "null") {
				return false
			}
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if bs, ok := s[k].([]any); ok {
				some := false
				for _, b := range bs {
					if acceptsNull(b, depth+1) {
						some = true
						break
					}
				}
				if !some {
					return false
				}
			}
		}
		if bs, ok := s["allOf"].([]any); ok {
			for _, b := range bs {
				if !acceptsNull(b, depth+1) {
					return false
				}
			}
		}
		return true
	}
	return true
}

func containsNil(list []any) bool {
	for _, v := range list {
		if v == nil {
			return true
		}
	}
	return false
}

func containsString(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// member is one member of a JSON object: its key decoded and as written, and its value.
type member struct {
	key    string
	rawKey json.RawMessage
	value  json.RawMessage
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(obj json.RawMessage) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		rawKey := bytes.Trim(obj[start:dec.InputOffset()], " \t\r\n,:")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{key: key, rawKey: rawKey, value: v})
	}
	return out, true
}
