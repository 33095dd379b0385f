package results_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

// FuzzFlatten decodes the input as a tools/call result, the way the go-sdk client does, and
// checks that Flatten and Parts never panic, that the text is non-empty valid UTF-8 within the
// cap, that errors are *ToolError exactly for isError results, and that binary payloads do
// not leak into the text as base64.
func FuzzFlatten(f *testing.F) {
	seeds := []string{
		`{"content":[]}`,
		`{}`,
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":""}],"isError":true}`,
		`{"structuredContent":{"a":1,"b":"<x>"},"content":[{"type":"text","text":"{\"b\":\"\\u003cx\\u003e\",\"a\":1}"}]}`,
		`{"structuredContent":[1,2],"content":[{"type":"text","text":"[1, 2]"},{"type":"text","text":"more"}]}`,
		`{"structuredContent":"s","content":[{"type":"text","text":" s "}]}`,
		`{"structuredContent":null,"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"}]}`,
		`{"content":[{"type":"audio","mimeType":"audio/wav","data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEA"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///y","mimeType":"text/plain","text":"yy"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///z","blob":"YmxvYmJsb2JibG9iYmxvYmJsb2I="}}]}`,
		`{"content":[{"type":"resource"}]}`,
		`{"content":[{"type":"resource_link","uri":"demo://x","name":"x","mimeType":"text/plain","size":3}]}`,
		`{"content":[{"type":"resource_link","uri":"data:text/plain;base64,aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=","name":"d"}]}`,
		`{"content":[{"type":"tool_use","id":"1","name":"t","input":{}},{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"n"}]}]}`,
		`{"_meta":{"k":"v","io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[{"type":"text","text":"  "}]}`,
		`{"content":[{"type":"text","text":"\u00e9\u20ac\ud83d\ude00 multi-byte"}],"isError":true}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), int16(i*37-100), i%3 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, maxBytes int16, app bool) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(data, &res); err != nil {
			return
		}
		opts := &results.Options{MaxBytes: int(maxBytes), App: app}
		text, err := results.Flatten(&res, opts)
		if text == "" {
			t.Fatalf("Flatten() = \"\"")
		}
		if !utf8.ValidString(text) {
			t.Fatalf("Flatten() = %q, invalid UTF-8", text)
		}
		if limit := capFor(int(maxBytes), res.IsError); limit > 0 && len(text) > limit {
			t.Fatalf("len(Flatten()) = %d, over the cap %d", len(text), limit)
		}
		var te *results.ToolError
		if res.IsError {
			if !errors.As(err, &te) || te.Text != text {
				t.Fatalf("Flatten() error = %v, want *ToolError with the text", err)
			}
		} else if err != nil {
			t.Fatalf("Flatten() error = %v, want nil", err)
		}
		parts := results.Parts(&res)
		if onlyBinary(&res) {
			for _, p := range parts {
				if len(p.Data) >= 12 && strings.Contains(text, base64.StdEncoding.EncodeToString(p.Data)[:16]) {
					t.Fatalf("Flatten() = %q holds the base64 of a %s payload", text, p.Kind)
				}
			}
		}
	})
}

// capFor mirrors the documented cap: MaxBytes (0: default), raised to MinTruncateBytes, and for
// errors to MinErrorBytes; none when negative.
func capFor(maxBytes int, isError bool) int {
	switch {
	case maxBytes < 0:
		return 0
	case maxBytes == 0:
		maxBytes = results.DefaultMaxBytes
	}
	if isError {
		maxBytes = max(maxBytes, results.MinErrorBytes)
	}
	return max(maxBytes, results.MinTruncateBytes)
}

// onlyBinary reports whether res carries no text the server could have put base64 into itself.
func onlyBinary(res *mcp.CallToolResult) bool {
	if res.StructuredContent != nil || len(res.Meta) > 0 {
		return false
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent, *mcp.AudioContent:
		case *mcp.EmbeddedResource:
			if c.Resource != nil && (c.Resource.Text != "" || strings.Contains(c.Resource.URI, ",")) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// FuzzTruncate checks the cap, UTF-8 validity, the marker arithmetic and that a non-empty
// input never becomes "" once the cap can hold a rune.
func FuzzTruncate(f *testing.F) {
	f.Add("hello world", 5)
	f.Add(strings.Repeat("é€😀", 40), 64)
	f.Add(strings.Repeat("0123456789", 100), 100)
	f.Add("\xff\xfe invalid \xc3", 3)
	f.Add("😀😀😀", 0)
	f.Add(strings.Repeat("😀", 30), 65)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 1 << 16 // keep caps in the range where inputs get cut
		got := results.Truncate(s, max)
		if max > 0 && len(got) > max {
			t.Fatalf("len(Truncate(%q, %d)) = %d, over the cap", s, max, len(got))
		}
		if s != "" && got == "" && (max <= 0 || max >= utf8.UTFMax) {
			t.Fatalf("Truncate(%q, %d) = \"\"", s, max)
		}
		if utf8.ValidString(s) {
			checkTruncate(t, s, max)
		}
	})
}

// FuzzCopyCheck gives rule 1's copy check a structured content and a text block, both the
// server's: Flatten never panics, reads the structured content as sent (compacted), and a
// block it drops has no word or number that the model does not read.
func FuzzCopyCheck(f *testing.F) {
	seeds := [][2]string{
		{`{"content":"# Notes\n- one"}`, "# Notes\n- one"},
		{`{"entities":[{"name":"a","observations":["x"]}],"relations":[]}`, "{\n \"relations\": [], \"entities\": [{\"name\": \"a\", \"observations\": [\"x\"]}]}"},
		{`{"name":"foo bar","size":12}`, "Name: foo bar\nSize: 12."},
		{`{"balance":5}`, "balance: -5"},
		{`{"n":12}`, "n: 12.5"},
		{`{"a":{"x":1,"y":[2,3]}}`, `{"y":[3,2],"x":1}`},
		{`{"items":["alpha","beta"]}`, "- alpha\n- beta"},
		{`{"city":"Zürich","t":-3.5e0}`, `City: "Zürich" | T: -3.5`},
		{`[1,"two",null,true]`, "[1, \"two\", null, true]"},
		{`"s"`, " s "},
		{`{"a":"x"}`, "[[[[ x"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, sc, text string) {
		if !utf8.ValidString(sc) || !utf8.ValidString(text) || strings.TrimSpace(text) == "" {
			return
		}
		var v any
		if json.Unmarshal([]byte(sc), &v) != nil || v == nil {
			return
		}
		res := &mcp.CallToolResult{StructuredContent: v, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		got, err := results.Flatten(res, &results.Options{MaxBytes: -1, Structured: []byte(sc)})
		if err != nil {
			t.Fatal(err)
		}
		want := compact(t, sc)
		if got != want && got != want+"\n"+text {
			t.Fatalf("Flatten() = %q, want %q alone or with the block", got, want)
		}
		if got == want {
			checkNoFactLost(t, res, got)
		}
	})
}

// FuzzCopyCheckBlocks gives rule 1's copy check a structured content and several blocks
// (the second input split at each U+001E; a block starting with U+001F is an embedded text
// resource, which is never a copy): Flatten never panics, reads the structured content
// first, keeps every block it does not drop in order, drops exactly the text blocks it
// drops when each comes alone (the check is per block), and a block it drops has no word
// or number that the model does not read.
func FuzzCopyCheckBlocks(f *testing.F) {
	seeds := [][2]string{
		{`{"content":"# Notes\n- one"}`, "# Notes\n- one\x1e{\"content\": \"# Notes\\n- one\"}"},
		{`{"entities":[{"name":"a","observations":["x"]}],"relations":[]}`, "{\"entities\":[{\"name\":\"a\",\"observations\":[\"x\"]}],\"relations\":[]}\x1e{\n \"relations\": [], \"entities\": [{\"name\": \"a\", \"observations\": [\"x\"]}]}"},
		{`{"n":2}`, "{\"n\":3}\x1en: 2\x1e2 results"},
		{`{"name":"foo bar","size":12}`, "Name: foo bar\x1e\x1fSize: 12\x1e  \x1eSize: 12 (of 13)"},
		{`[{"id":1},{"id":2}]`, "id: 1\x1eid: 2\x1eid: 3"},
		{`"s"`, " s \x1es\x1et"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, sc, blocks string) {
		if !utf8.ValidString(sc) || !utf8.ValidString(blocks) {
			return
		}
		var v any
		if json.Unmarshal([]byte(sc), &v) != nil || v == nil {
			return
		}
		texts := strings.Split(blocks, "\x1e")
		if len(texts) > 16 {
			return
		}
		res := &mcp.CallToolResult{StructuredContent: v}
		for _, s := range texts {
			if r, ok := strings.CutPrefix(s, "\x1f"); ok {
				res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///r", Text: r}})
				continue
			}
			res.Content = append(res.Content, &mcp.TextContent{Text: s})
		}
		opts := &results.Options{MaxBytes: -1, Structured: []byte(sc)}
		got, err := results.Flatten(res, opts)
		if err != nil {
			t.Fatal(err)
		}
		head := compact(t, sc)
		want := head
		for _, c := range res.Content {
			alone := &mcp.CallToolResult{StructuredContent: v, Content: []mcp.Content{c}}
			one, err := results.Flatten(alone, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(one, head) {
				t.Fatalf("Flatten() of one block = %q, want it to start with %q", one, head)
			}
			want += one[len(head):] // "" when dropped (or blank), else "\n" and the block
		}
		if got != want {
			t.Fatalf("Flatten() =\n%q\nwant the structured content and the kept blocks in order:\n%q", got, want)
		}
		checkNoFactLost(t, res, got)
	})
}
