package toolsearch_test

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// oldParams is Params as it was before issue 34: each level of the schema decoded again
// by encoding/json. It is kept as the reference TestParamsOnePass compares Params with,
// and as the old build path of BenchmarkIndex.
func oldParams(schema json.RawMessage) []toolsearch.Param {
	var out []toolsearch.Param
	oldCollect(schema, 0, &out)
	return out
}

func oldCollect(raw json.RawMessage, depth int, out *[]toolsearch.Param) {
	if depth > 4 || len(*out) >= 200 {
		return
	}
	var node struct {
		Properties json.RawMessage   `json:"properties"`
		Items      json.RawMessage   `json:"items"`
		AnyOf      []json.RawMessage `json:"anyOf"`
		OneOf      []json.RawMessage `json:"oneOf"`
		AllOf      []json.RawMessage `json:"allOf"`
	}
	if !oldIsObject(raw) || json.Unmarshal(raw, &node) != nil {
		return
	}
	var nested []json.RawMessage
	if oldIsObject(node.Properties) {
		dec := json.NewDecoder(bytes.NewReader(node.Properties))
		if _, err := dec.Token(); err != nil {
			return
		}
		for dec.More() && len(*out) < 200 {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			key, _ := tok.(string)
			var value json.RawMessage
			if err := dec.Decode(&value); err != nil {
				return
			}
			var p struct {
				Description string          `json:"description"`
				Title       string          `json:"title"`
				Enum        json.RawMessage `json:"enum"`
			}
			if oldIsObject(value) {
				_ = json.Unmarshal(value, &p)
			}
			desc := p.Description
			if p.Title != "" {
				desc = p.Title + ". " + desc
			}
			// Added with issue 34's enum values: the string values of an enum array, the
			// first 32, after the description.
			var values []json.RawMessage
			var enum []string
			_ = json.Unmarshal(p.Enum, &values)
			for _, v := range values {
				var s string
				if len(enum) < 32 && json.Unmarshal(v, &s) == nil {
					enum = append(enum, s)
				}
			}
			if len(enum) > 0 {
				desc += " (" + strings.Join(enum, ", ") + ")"
			}
			*out = append(*out, toolsearch.Param{Name: key, Description: desc})
			nested = append(nested, value)
		}
	}
	for _, v := range nested {
		oldCollect(v, depth+1, out)
	}
	if len(node.Items) > 0 {
		oldCollect(node.Items, depth+1, out)
	}
	for _, group := range [][]json.RawMessage{node.AnyOf, node.OneOf, node.AllOf} {
		for _, v := range group {
			oldCollect(v, depth+1, out)
		}
	}
}

func oldIsObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
