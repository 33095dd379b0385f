package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
)

// SEP-2243 headers of a Streamable HTTP request on protocol 2026-07-28: Mcp-Name carries
// the tool's name, and each argument whose inputSchema property has an x-mcp-header marker
// is mirrored into Mcp-Param-{marker}. Values a header cannot carry plainly are sent in the
// Base64 sentinel form. go-sdk validated the markers when it listed the tools (tools with
// invalid ones are dropped); the bindings are read from the schema the bridge keeps, once
// per tool and schema.

const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
	// maxSafeInteger bounds the integers an x-mcp-header value may carry (JavaScript's safe range).
	maxSafeInteger = 1<<53 - 1
)

// headerValue encodes s for an Mcp-Name or Mcp-Param-* header: as is when it is plain
// printable ASCII without surrounding blanks and does not look like the sentinel itself,
// else as =?base64?…?=.
func headerValue(s string) string {
	if !needsBase64(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	return len(s) >= len(base64Prefix)+len(base64Suffix) && s[:len(base64Prefix)] == base64Prefix && s[len(s)-len(base64Suffix):] == base64Suffix
}

// headerBinding is one x-mcp-header marker: the property path from the arguments' root
// and the header name after "Mcp-Param-".
type headerBinding struct {
	path   []string
	header string
}

// schemaBindings caches the bindings of each tool's schema.
type schemaBindings struct {
	m sync.Map // tool name -> *toolBindings
}

type toolBindings struct {
	schema   json.RawMessage // the schema they were read from (compared by identity)
	bindings []headerBinding
}

// forTool returns the bindings of schema, the inputSchema of tool name.
func (sb *schemaBindings) forTool(name string, schema json.RawMessage) []headerBinding {
	if len(schema) == 0 {
		return nil
	}
	if v, ok := sb.m.Load(name); ok {
		tb := v.(*toolBindings)
		if len(tb.schema) == len(schema) && &tb.schema[0] == &schema[0] {
			return tb.bindings
		}
	}
	var b []headerBinding
	if bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		b = collectBindings(schema, nil, nil, 0)
	}
	sb.m.Store(name, &toolBindings{schema: schema, bindings: b})
	return b
}

// collectBindings walks the properties of the schema object s (reached by path) for
// x-mcp-header markers, statically reachable through "properties" only.
func collectBindings(s []byte, path []string, out []headerBinding, depth int) []headerBinding {
	if depth > maxDepth {
		return out
	}
	forMembers(s, func(key string, val []byte) bool {
		if key != "properties" {
			return true
		}
		forMembers(val, func(prop string, ps []byte) bool {
			p := append(slices.Clip(path), prop)
			forMembers(ps, func(k string, v []byte) bool {
				if k == "x-mcp-header" {
					if h, ok := stringValue(v); ok && h != "" {
						out = append(out, headerBinding{path: p, header: h})
					}
				}
				return true
			})
			out = collectBindings(ps, p, out, depth+1)
			return true
		})
		return true
	})
	return out
}

// paramHeaders returns the Mcp-Param-* headers for args under bindings: for each bound
// argument present, not null and a string, boolean or safe integer, its header value.
func paramHeaders(bindings []headerBinding, args json.RawMessage) map[string]string {
	if len(bindings) == 0 || len(args) == 0 {
		return nil
	}
	var out map[string]string
	for _, b := range bindings {
		v, ok := lookupPath(args, b.path)
		if !ok || isNull(v) {
			continue
		}
		s, ok := primitiveString(v)
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(bindings))
		}
		out["Mcp-Param-"+b.header] = headerValue(s)
	}
	return out
}

// lookupPath returns the raw value at path in the JSON object obj.
func lookupPath(obj []byte, path []string) ([]byte, bool) {
	cur := obj
	for _, part := range path {
		var next []byte
		found := false
		forMembers(cur, func(key string, val []byte) bool {
			if key == part {
				next, found = val, true // last one wins, as when decoding
			}
			return true
		})
		if !found {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// primitiveString converts a string, boolean or integer (within the safe range; a number
// with a fraction is not an integer) to its header text, as SEP-2243 prescribes.
func primitiveString(v []byte) (string, bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "", false
	}
	switch x := x.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) || x > maxSafeInteger || x < -maxSafeInteger {
			return "", false
		}
		return strconv.FormatInt(int64(x), 10), true
	}
	return "", false
}
