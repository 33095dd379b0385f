package toolsearch

import (
	"bytes"
	"encoding/json"
)

const (
	// maxParams bounds the parameters taken from one schema (and indexed per document).
	maxParams = 200
	// maxParamDepth bounds how deep Params looks into nested objects, arrays and
	// combinators.
	maxParamDepth = 4
)

// Params lists the parameters of a JSON Schema (a tool's inputSchema) for a Document: the
// properties of the top-level object in schema order with their descriptions, then those
// of nested objects, array items and anyOf/oneOf/allOf branches, up to four levels deep
// and 200 parameters. $refs are not followed. A schema that is not a JSON object gives
// none; malformed parts are skipped.
func Params(schema json.RawMessage) []Param {
	var out []Param
	collectParams(schema, 0, &out)
	return out
}

func collectParams(raw json.RawMessage, depth int, out *[]Param) {
	if depth > maxParamDepth || len(*out) >= maxParams {
		return
	}
	var node struct {
		Properties json.RawMessage   `json:"properties"`
		Items      json.RawMessage   `json:"items"`
		AnyOf      []json.RawMessage `json:"anyOf"`
		OneOf      []json.RawMessage `json:"oneOf"`
		AllOf      []json.RawMessage `json:"allOf"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &node) != nil {
		return
	}
	var nested []json.RawMessage
	if isObject(node.Properties) {
		dec := json.NewDecoder(bytes.NewReader(node.Properties))
		if _, err := dec.Token(); err != nil { // {
			return
		}
		for dec.More() && len(*out) < maxParams {
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
				Description string `json:"description"`
				Title       string `json:"title"`
			}
			if isObject(value) {
				_ = json.Unmarshal(value, &p) // a description that is not a string is left out
			}
			desc := p.Description
			if p.Title != "" {
				desc = p.Title + ". " + desc
			}
			*out = append(*out, Param{Name: key, Description: desc})
			nested = append(nested, value)
		}
	}
	for _, v := range nested {
		collectParams(v, depth+1, out)
	}
	if len(node.Items) > 0 {
		collectParams(node.Items, depth+1, out)
	}
	for _, group := range [][]json.RawMessage{node.AnyOf, node.OneOf, node.AllOf} {
		for _, v := range group {
			collectParams(v, depth+1, out)
		}
	}
}

func isObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
