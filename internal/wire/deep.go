package wire

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A message nested deeper than go-sdk decodes (maxDepth) cannot be handed to it, and a
// response dropped as noise would leave its request waiting for the whole timeout (a
// tools/list whose one inputSchema nests 1,001 levels would cost the connect timeout). So a
// response that is too deep is answered at once with a JSON-RPC error for its ID: the
// request fails with a clear reason, the session lives on.

// TooDeepAnswer returns the error response standing in for line, a response nested deeper
// than maxDepth; nil when line is not a single response with an ID (a request or a
// notification from the server, or no JSON-RPC at all: those stay noise).
func TooDeepAnswer(line []byte) *jsonrpc.Response {
	var idRaw []byte
	hasMethod := false
	if !topLevelMembers(line, func(key string, val []byte) {
		switch key {
		case "id":
			idRaw = val
		case "method":
			hasMethod = true
		}
	}) || hasMethod || len(idRaw) == 0 || isNull(idRaw) {
		return nil
	}
	id, err := parseID(idRaw)
	if err != nil {
		return nil
	}
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeParseError,
		Message: fmt.Sprintf("the server's answer nests deeper than %d levels, more than the MCP SDK decodes (an inputSchema nested that deep?); refused", maxDepth),
	}}
}

// topLevelMembers calls f with each key and raw value of the JSON object that is line,
// however deep its values nest. It reports whether line is such an object.
func topLevelMembers(b []byte, f func(key string, val []byte)) bool {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return SkipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return false
		}
		key, ok := stringValue(b[i:kEnd])
		if !ok {
			return false
		}
		i = SkipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = SkipSpace(b, i+1)
		vEnd, ok := skipDeep(b, i)
		if !ok {
			return false
		}
		f(key, b[i:vEnd])
		i = SkipSpace(b, vEnd)
		switch {
		case i < len(b) && b[i] == ',':
			i = SkipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return SkipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// skipDeep returns the index just past the value starting at b[i], with no bound on its
// nesting (brackets are counted, not checked pairwise: this is only for finding the end).
func skipDeep(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	if b[i] != '{' && b[i] != '[' {
		end, err := skipValue(b, i, 0)
		return end, err == nil
	}
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return 0, false
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}
