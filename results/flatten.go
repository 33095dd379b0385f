// This file is over 500 lines on purpose: the flattening rules (structuredContent, text
// blocks, a placeholder for every content kind, the no-text JSON fallback) and their shared
// helpers read best as one unit.

package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// DefaultMaxBytes is the cap [Flatten] applies to its text when [Options].MaxBytes is 0.
const DefaultMaxBytes = 100_000

// MinErrorBytes is the smallest cap [Flatten] applies to the text of a tool error
// (isError: true), whatever [Options].MaxBytes says, unless MaxBytes is negative (no cap):
// an error the model cannot read is useless.
const MinErrorBytes = 2048

// noContent is the text of a result that has nothing to show and cannot be encoded as JSON
// (only possible for results built in Go, never for decoded ones).
const noContent = "(no content)"

// maxNesting bounds how deep nested tool_result content is followed.
const maxNesting = 4

// Options configures [Flatten]. A nil *Options means the zero value: the default cap and an
// ordinary (non-App) tool.
type Options struct {
	// MaxBytes caps the length of the returned text: 0 means [DefaultMaxBytes], a negative
	// value means no cap. Positive values below [MinTruncateBytes] are raised to it, and tool
	// errors get at least [MinErrorBytes].
	MaxBytes int
	// App marks an MCP App tool: the model reads its content only, because the MCP Apps spec
	// reserves structuredContent for the App's UI.
	App bool
	// Structured, when set, is the result's structuredContent as the server sent it (the
	// bytes of that member of the raw tools/call result). The model then reads it compacted,
	// in the server's key order with its numbers as written (strings spelt as in the rest of
	// the text, escapes such as \u003c decoded), instead of the encoding of
	// res.StructuredContent (a decoded map, whose keys come out sorted). Bytes that are not one valid JSON value are ignored;
	// it is ignored too when res.StructuredContent is nil or for an App tool. Flatten
	// neither keeps nor modifies it.
	Structured []byte
}

// Flatten returns the text a model reads for res, following the rules in the package
// documentation. The text is valid UTF-8 and never empty. When res.IsError is set, Flatten
// also returns a *[ToolError] whose Text equals the returned text. A nil res is an error
// (and the text is then "").
func Flatten(res *mcp.CallToolResult, opts *Options) (string, error) {
	if res == nil {
		return "", errors.New("flatten tool result: result is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	p := pieces{list: make([]string, 0, 2*len(res.Content)+1)}
	var echo *copyCheck
	if !o.App && res.StructuredContent != nil {
		if js, ok := structuredText(res.StructuredContent, o.Structured); ok {
			p.block(js)
			echo = newCopyCheck(js, res.StructuredContent)
		}
	}
	for _, c := range res.Content {
		addContent(&p, c, echo, 0)
	}
	if p.n == 0 {
		p.block(fallbackJSON(res))
	}
	text := p.String(limit(o.MaxBytes, res.IsError))
	if res.IsError {
		return text, &ToolError{Text: text}
	}
	return text, nil
}

// structuredText is the compact JSON the model reads of structured content v: raw
// compacted when it is given and valid, else v encoded. ok is false for nothing to show
// (null, or a value that cannot be encoded).
func structuredText(v any, raw []byte) (string, bool) {
	if len(raw) > 0 {
		if js, ok := compactRaw(raw); ok {
			return js, js != "null"
		}
	}
	js, err := compactJSON(v)
	return js, err == nil && js != "null"
}

// limit returns the effective cap (0: none) for Options.MaxBytes.
func limit(maxBytes int, isError bool) int {
	if maxBytes < 0 {
		return 0
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if isError {
		maxBytes = max(maxBytes, MinErrorBytes)
	}
	return max(maxBytes, MinTruncateBytes)
}

// addContent renders one content block into p. Nil blocks and empty or whitespace-only text
// add nothing; text that only copies the structured content (echo != nil, rule 1) is dropped.
func addContent(p *pieces, c mcp.Content, echo *copyCheck, depth int) {
	switch c := c.(type) {
	case *mcp.TextContent:
		if u, ok := unknownContent(c); ok {
			p.block(unknownLabel(u))
			return
		}
		if c == nil || isBlank(c.Text) || (echo != nil && echo.matches(c.Text)) {
			return
		}
		p.block(c.Text)
	case *mcp.ImageContent:
		if c != nil {
			p.block(label("image", "", c.MIMEType, sizeNote(int64(len(c.Data)))))
		}
	case *mcp.AudioContent:
		if c != nil {
			p.block(label("audio", "", c.MIMEType, sizeNote(int64(len(c.Data)))))
		}
	case *mcp.ResourceLink:
		if c == nil {
			return
		}
		size := ""
		if c.Size != nil && *c.Size >= 0 {
			size = sizeNote(*c.Size)
		}
		p.block(label("resource link", c.URI, c.Name, c.MIMEType, size))
	case *mcp.EmbeddedResource:
		if c == nil {
			return
		}
		r := c.Resource
		switch {
		case r == nil:
			p.block("[resource: no contents]")
		case r.Text != "" && len(r.Blob) == 0:
			p.block(label("resource", r.URI, r.MIMEType))
			p.add("\n")
			p.add(r.Text)
		default:
			p.block(label("resource", r.URI, r.MIMEType, sizeNote(int64(len(r.Blob)+len(r.Text)))))
		}
	//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
	case *mcp.ToolUseContent:
		if c != nil {
			p.block(label("tool use", "", c.Name))
		}
	//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
	case *mcp.ToolResultContent:
		if c == nil {
			return
		}
		state := ""
		if c.IsError {
			state = "error"
		}
		p.block(label("tool result", "", state))
		if depth >= maxNesting {
			return
		}
		for _, n := range c.Content {
			addContent(p, n, nil, depth+1)
		}
	case nil:
	default:
		// The Content interface is closed (it has an unexported method), so this only
		// happens if a later go-sdk adds a type.
		p.block(fmt.Sprintf("[content: %T]", c))
	}
}

// isBlank reports whether s holds nothing but whitespace.
func isBlank(s string) bool {
	return strings.TrimSpace(s) == ""
}

// label builds a placeholder such as "[image: image/png, 5 B]" or
// "[resource link: demo://x (x, text/plain, 3 B)]". Empty details are left out.
func label(kind, uri string, details ...string) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(kind)
	n := 0
	if uri != "" {
		b.WriteString(": ")
		b.WriteString(cleanURI(uri))
	}
	for _, d := range details {
		if d == "" {
			continue
		}
		switch {
		case n > 0:
			b.WriteString(", ")
		case uri != "":
			b.WriteString(" (")
		default:
			b.WriteString(": ")
		}
		b.WriteString(redact.Controls(redact.Clip(d, 200), ' '))
		n++
	}
	if uri != "" && n > 0 {
		b.WriteByte(')')
	}
	b.WriteByte(']')
	return b.String()
}

// cleanURI shortens a URI for a placeholder: the payload of a data: URI is elided (it is
// usually base64) and long URIs are cut.
func cleanURI(uri string) string {
	if len(uri) >= 5 && strings.EqualFold(uri[:5], "data:") {
		if i := strings.IndexByte(uri, ','); i >= 0 && i+1 < len(uri) {
			return redact.Controls(redact.Clip(uri[:i+1], 100), ' ') + "…(" + sizeNote(int64(len(uri)-i-1)) + ")"
		}
	}
	return redact.Controls(redact.Clip(uri, 500), ' ')
}

// sizeNote formats a byte count: "3 B", "5.4 KB", "12.0 MB".
func sizeNote(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range []string{"KB", "MB", "GB", "TB"} {
		f /= unit
		if f < unit || u == "TB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
	}
	return "" // unreachable
}

// compactJSON encodes v without HTML escaping and without the trailing newline. Generic
// values (what the go-sdk decodes structuredContent into) take a faster path with the same
// output.
func compactJSON(v any) (string, error) {
	var keys [][]string
	if js, ok := appendGeneric(nil, v, 0, &keys); ok {
		return string(js), nil
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// equalJSON compares two generic JSON values (see isGeneric) without reflect.DeepEqual, whose
// bookkeeping allocates for every map and slice.
func equalJSON(a, b any, depth int) bool {
	if depth > 10000 {
		return false
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equalJSON(av, bv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i], depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// isGeneric reports whether v consists only of the types json.Unmarshal produces for an any,
// as the go-sdk's decoding of structuredContent does.
func isGeneric(v any, depth int) bool {
	if depth > 10000 {
		return false
	}
	switch v := v.(type) {
	case nil, bool, float64, string:
		return true
	case map[string]any:
		for _, e := range v {
			if !isGeneric(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !isGeneric(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// skipSpace returns the index of the first non-space byte of s at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// fieldsEqual reports whether a and b have the same whitespace-separated fields, that is,
// whether they are equal once leading and trailing whitespace is removed and every inner
// run of whitespace is read as one space. It does not allocate.
func fieldsEqual(a, b string) bool {
	i, j := 0, 0
	for {
		i, j = skipSpace(a, i), skipSpace(b, j)
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		for i < len(a) && j < len(b) && !isSpace(a[i]) && !isSpace(b[j]) {
			if a[i] != b[j] {
				return false
			}
			i, j = i+1, j+1
		}
		if (i < len(a) && !isSpace(a[i])) || (j < len(b) && !isSpace(b[j])) {
			return false
		}
	}
}

// elidedBlock is a content block in the fallback JSON, with binary payloads replaced by a
// size note.
type elidedBlock struct {
	Type     string           `json:"type"`
	Text     *string          `json:"text,omitempty"`
	MIMEType string           `json:"mimeType,omitempty"`
	Data     string           `json:"data,omitempty"`
	URI      string           `json:"uri,omitempty"`
	Name     string           `json:"name,omitempty"`
	Size     *int64           `json:"size,omitempty"`
	Resource *elidedResource  `json:"resource,omitempty"`
	Content  []*elidedBlock   `json:"content,omitempty"`
	Meta     mcp.Meta         `json:"_meta,omitempty"`
	Notes    *mcp.Annotations `json:"annotations,omitempty"`
}

type elidedResource struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// fallbackJSON is the text of a result without anything to show: the result as compact JSON
// with binary payloads elided and without structuredContent (either it is absent, could not
// be encoded, or it belongs to an App's UI).
func fallbackJSON(res *mcp.CallToolResult) string {
	v := struct {
		Meta    mcp.Meta       `json:"_meta,omitempty"`
		Content []*elidedBlock `json:"content"`
		IsError bool           `json:"isError,omitempty"`
	}{Meta: unreserved(res.Meta), Content: elide(res.Content, 0), IsError: res.IsError}
	js, err := compactJSON(v)
	if err != nil {
		v.Meta = nil // only Go-built results can hold unencodable values
		if js, err = compactJSON(v); err != nil {
			return noContent
		}
	}
	return js
}

// unreserved returns meta without the keys whose prefix the MCP spec reserves for the
// protocol (a label "modelcontextprotocol" or "mcp", as in "io.modelcontextprotocol/serverInfo",
// which the go-sdk adds to every result): they tell the model nothing.
func unreserved(meta mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range meta {
		if reservedKey(k) {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(meta))
		}
		out[k] = v
	}
	return out
}

func reservedKey(k string) bool {
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return false
	}
	for label := range strings.SplitSeq(k[:i], ".") {
		if label == "modelcontextprotocol" || label == "mcp" {
			return true
		}
	}
	return false
}

// elide converts content blocks for fallbackJSON.
func elide(cs []mcp.Content, depth int) []*elidedBlock {
	out := make([]*elidedBlock, 0, len(cs))
	for _, c := range cs {
		var e *elidedBlock
		switch c := c.(type) {
		case *mcp.TextContent:
			if c != nil {
				e = &elidedBlock{Type: "text", Text: &c.Text, Meta: unreserved(c.Meta), Notes: c.Annotations}
			}
		case *mcp.ImageContent:
			if c != nil {
				e = &elidedBlock{Type: "image", MIMEType: c.MIMEType, Data: elided(len(c.Data)), Meta: unreserved(c.Meta), Notes: c.Annotations}
			}
		case *mcp.AudioContent:
			if c != nil {
				e = &elidedBlock{Type: "audio", MIMEType: c.MIMEType, Data: elided(len(c.Data)), Meta: unreserved(c.Meta), Notes: c.Annotations}
			}
		case *mcp.ResourceLink:
			if c != nil {
				e = &elidedBlock{Type: "resource_link", URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Size: c.Size, Meta: unreserved(c.Meta), Notes: c.Annotations}
			}
		case *mcp.EmbeddedResource:
			if c != nil {
				e = &elidedBlock{Type: "resource", Meta: unreserved(c.Meta), Notes: c.Annotations}
				if r := c.Resource; r != nil {
					e.Resource = &elidedResource{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text}
					if len(r.Blob) > 0 {
						e.Resource.Blob = elided(len(r.Blob))
					}
				}
			}
		//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
		case *mcp.ToolUseContent:
			if c != nil {
				e = &elidedBlock{Type: "tool_use", Name: c.Name}
			}
		//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
		case *mcp.ToolResultContent:
			if c != nil {
				e = &elidedBlock{Type: "tool_result"}
				if depth < maxNesting {
					e.Content = elide(c.Content, depth+1)
				}
			}
		}
		out = append(out, e)
	}
	return out
}

func elided(n int) string { return "[elided: " + sizeNote(int64(n)) + "]" }
