package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// Content blocks go-sdk cannot decode. go-sdk's CallToolResult decoding fails the whole
// result on one content block of a type it does not know ("unrecognized content type"),
// and the blocks beside it are lost; yet new content types are how the protocol grows. So
// before go-sdk (or the direct client) decodes a result, each such block is replaced by a
// text block that carries the block as the server sent it:
//
//	{"type":"text","text":"","_meta":{"io.github.ttalk.mcpbridge/unknownContent":"<the block's JSON>"}}
//
// Package results renders that block as a placeholder naming the type, MIME type and size
// and hands hosts the raw block (results.UnknownContentKey is this key). A block counts as
// unknown when it is not an object with a type go-sdk decodes at that place: the seven
// content types of a tool result, the five of a tool_result's nested content.

// UnknownContentKey is the _meta key of a text block standing for a content block go-sdk
// cannot decode; its value is that block's JSON, as a string.
const UnknownContentKey = "io.github.ttalk.mcpbridge/unknownContent"

// resultContent are the content types go-sdk decodes in a tools/call result, nestedContent
// those it decodes in a tool_result block's content.
var (
	resultContent = []string{"text", "image", "audio", "resource_link", "resource", "tool_use", "tool_result"}
	nestedContent = resultContent[:5]
)

// contentKey is the member ReplaceUnknownContent looks for, quoted as a key.
var contentKey = []byte(`"content"`)

// ReplaceUnknownContent returns result (a tools/call result, or any result with a content
// array) with every content block go-sdk cannot decode replaced as described above, and
// whether any was; when none was (or result is not a well-formed object), it returns result
// itself. Only a result with such a block costs more than a scan.
func ReplaceUnknownContent(result []byte) ([]byte, bool) {
	if !bytes.Contains(result, contentKey) {
		return result, false
	}
	content, ok := memberValue(result, "content")
	// The scan skips over values without validating all of them: only a valid result is
	// rebuilt, so malformed input stays go-sdk's to refuse.
	if !ok || !hasUnknown(content, resultContent, 0) || !json.Valid(result) {
		return result, false
	}
	out, ok := appendWithContent(make([]byte, 0, len(result)+128), result, resultContent, 0)
	if !ok {
		return result, false
	}
	return out, true
}

// blockType returns the type of content block b, unescaped (without allocating when it
// needs no unescaping); ok is false when b is not an object with a string type.
func blockType(b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	v, ok := memberValue(b, "type")
	if !ok || len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	if inner := v[1 : len(v)-1]; v[len(v)-1] == '"' && bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, true
	}
	t, ok := stringValue(v)
	return []byte(t), ok
}

func known(t []byte, ok bool, types []string) bool {
	return ok && slices.ContainsFunc(types, func(k string) bool { return string(t) == k })
}

// hasUnknown reports whether the content array arr holds a block go-sdk cannot decode
// (types: those it decodes at this depth).
func hasUnknown(arr []byte, types []string, depth int) bool {
	if len(arr) == 0 || arr[0] != '[' {
		return false // null or malformed: go-sdk's to judge
	}
	items := scanArray(arr)
	for {
		item, ok := items.next()
		if !ok {
			return false
		}
		t, tok := blockType(item)
		if !known(t, tok, types) {
			return true
		}
		if string(t) == "tool_result" && depth == 0 {
			if nested, ok := memberValue(item, "content"); ok && hasUnknown(nested, nestedContent, 1) {
				return true
			}
		}
	}
}

// appendContent appends the content array arr with its unknown blocks replaced.
func appendContent(out, arr []byte, types []string, depth int) []byte {
	if len(arr) == 0 || arr[0] != '[' {
		return append(out, arr...)
	}
	out = append(out, '[')
	items := scanArray(arr)
	for n := 0; ; n++ {
		item, ok := items.next()
		if !ok {
			break
		}
		if n > 0 {
			out = append(out, ',')
		}
		t, tok := blockType(item)
		switch {
		case !known(t, tok, types):
			out = append(out, `{"type":"text","text":"","_meta":{"`+UnknownContentKey+`":`...)
			out = jsonstr.Append(out, string(item))
			out = append(out, "}}"...)
		case string(t) == "tool_result" && depth == 0:
			out, _ = appendWithContent(out, item, nestedContent, 1) // a tool_result block
		default:
			out = append(out, item...)
		}
	}
	return append(out, ']')
}

// appendWithContent appends the object o with the unknown blocks of its "content" member
// replaced (types: those go-sdk decodes at depth); ok is false when o is not a well-formed
// object.
func appendWithContent(out, o []byte, types []string, depth int) ([]byte, bool) {
	return appendWithMember(out, o, "content", func(out, v []byte) []byte { return appendContent(out, v, types, depth) })
}

// appendWithMember appends the object o with the value of every member named key appended
// by rewrite instead (every copy: a decoder keeps the last); ok is false when o is not a
// well-formed object.
func appendWithMember(out, o []byte, key string, rewrite func(out, v []byte) []byte) ([]byte, bool) {
	out = append(out, '{')
	obj := scanObject(o)
	for n := 0; ; n++ {
		k, v, ok := obj.next()
		if !ok {
			break
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, k...)
		out = append(out, ':')
		if keyIs(k, key) {
			out = rewrite(out, v)
		} else {
			out = append(out, v...)
		}
	}
	return append(out, '}'), obj.valid()
}
