package results_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

const tenMB = 10 << 20

// BenchmarkFlatten10MB flattens results of about 10 MB. Allocations must stay bounded (a few
// per block, not per byte) and time linear in the size.
func BenchmarkFlatten10MB(b *testing.B) {
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 2) + "\n" // 89 bytes
	bigText := strings.Repeat(line, tenMB/len(line))

	rows := make([]any, 0, tenMB/100)
	for i := range cap(rows) {
		rows = append(rows, map[string]any{"id": float64(i), "name": fmt.Sprintf("row <%d> & more padding", i), "ok": i%2 == 0})
	}
	structured := map[string]any{"rows": rows}
	echo, err := json.Marshal(structured) // HTML-escaped, like the go-sdk's own echo text
	if err != nil {
		b.Fatal(err)
	}

	many := make([]mcp.Content, 0, tenMB/len(line))
	for range cap(many) {
		many = append(many, &mcp.TextContent{Text: line})
	}

	benches := []struct {
		name string
		res  *mcp.CallToolResult
		opts *results.Options
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText}}}, nil},
		{"text no cap", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText}}}, &results.Options{MaxBytes: -1}},
		{"many blocks", &mcp.CallToolResult{Content: many}, nil},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, tenMB)}}}, nil},
		{"structured", &mcp.CallToolResult{StructuredContent: structured}, nil},
		{"structured with echo", &mcp.CallToolResult{StructuredContent: structured, Content: []mcp.Content{&mcp.TextContent{Text: string(echo)}}}, nil},
	}
	for _, bb := range benches {
		b.Run(strings.ReplaceAll(bb.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				text, _ := results.Flatten(bb.res, bb.opts)
				if text == "" {
					b.Fatal("empty text")
				}
			}
		})
	}
}

// BenchmarkCopyCheck flattens a structured content of 10,000 rows with a text copy of
// under 1 MiB that lists them as "id: N, name: …" lines (rule 1's concatenation, the
// longest block it scans), and the same copy with one word more at the end (scanned to
// the end, then kept). Time must stay linear in the size.
func BenchmarkCopyCheck(b *testing.B) {
	rows := make([]any, 0, 10_000)
	var text strings.Builder
	for i := range cap(rows) {
		name := fmt.Sprintf("row <%d> & more padding", i)
		rows = append(rows, map[string]any{"id": float64(i), "name": name})
		fmt.Fprintf(&text, "- id: %d, name: %s\n", i, name)
	}
	structured := map[string]any{"rows": rows}
	for _, bb := range []struct{ name, text string }{
		{"labelled copy", text.String()},
		{"labelled copy and more", text.String() + "more"},
	} {
		res := &mcp.CallToolResult{StructuredContent: structured, Content: []mcp.Content{&mcp.TextContent{Text: bb.text}}}
		b.Run(strings.ReplaceAll(bb.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.text)))
			for b.Loop() {
				if text, _ := results.Flatten(res, nil); text == "" {
					b.Fatal("empty text")
				}
			}
		})
	}
}
