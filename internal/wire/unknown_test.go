package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplaceUnknownContent: every block go-sdk cannot decode becomes a text block
// carrying it, at the top and inside a tool_result; everything else keeps its bytes; a
// result without such a block comes back as itself; the output decodes with go-sdk.
func TestReplaceUnknownContent(t *testing.T) {
	const video = `{"type":"video","mimeType":"video/mp4","data":"AAAA"}`
	marker := func(block string) string {
		b, _ := json.Marshal(block)
		return `{"type":"text","text":"","_meta":{"` + UnknownContentKey + `":` + string(b) + `}}`
	}
	tests := []struct {
		name, in, want string // want "": unchanged
	}{
		{"text only", `{"content":[{"type":"text","text":"a"}]}`, ""},
		{"every known type", `{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AA=="},{"type":"audio","mimeType":"audio/wav","data":"AA=="},{"type":"resource_link","uri":"x:y","name":"n"},{"type":"resource","resource":{"uri":"x:y","text":"t"}}]}`, ""},
		{"no content", `{"structuredContent":{"content":[{"type":"video"}]}}`, ""},
		{"malformed", `{"content":[{"type":"video"}`, ""},
		{"video between texts",
			`{"content":[{"type":"text","text":"before"},` + video + `,{"type":"text","text":"after"}],"isError":false}`,
			`{"content":[{"type":"text","text":"before"},` + marker(video) + `,{"type":"text","text":"after"}],"isError":false}`},
		{"no type, non-string type, not an object",
			`{"content":[{"data":"x"},{"type":7},null]}`,
			`{"content":[` + marker(`{"data":"x"}`) + `,` + marker(`{"type":7}`) + `,` + marker(`null`) + `]}`},
		{"nested in tool_result",
			`{"_meta":{"k":1},"content":[{"type":"tool_result","toolUseId":"u","content":[{"type":"text","text":"in"},{"type":"tool_use","id":"x","name":"n","input":{}}]}]}`,
			`{"_meta":{"k":1},"content":[{"type":"tool_result","toolUseId":"u","content":[{"type":"text","text":"in"},` + marker(`{"type":"tool_use","id":"x","name":"n","input":{}}`) + `]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReplaceUnknownContent([]byte(tt.in))
			if tt.want == "" {
				if ok || string(got) != tt.in {
					t.Fatalf("ReplaceUnknownContent(%s) = %s, %v; want it unchanged", tt.in, got, ok)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Fatalf("ReplaceUnknownContent(%s) =\n %s, %v\nwant\n %s, true", tt.in, got, ok, tt.want)
			}
			var res mcp.CallToolResult
			if err := res.UnmarshalJSON(got); err != nil {
				t.Fatalf("go-sdk cannot decode the replaced result: %v", err)
			}
		})
	}
}

// TestDirectDecodeUnknownContent: the direct client's decoding keeps the blocks beside an
// unknown one, where go-sdk's alone fails the result.
func TestDirectDecodeUnknownContent(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"before"},{"type":"video","mimeType":"video/mp4","data":"AAAA"}]}`)
	var plain mcp.CallToolResult
	if err := plain.UnmarshalJSON(raw); err == nil || !strings.Contains(err.Error(), "video") {
		t.Fatalf("go-sdk's decoding = %v; the test assumes it refuses the block", err)
	}
	res, err := decodeCallToolResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 {
		t.Fatalf("decoded %d blocks, want 2", len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "before" {
		t.Errorf("block 0 = %#v, want the text", res.Content[0])
	}
	tc, ok := res.Content[1].(*mcp.TextContent)
	if !ok || tc.Meta[UnknownContentKey] != `{"type":"video","mimeType":"video/mp4","data":"AAAA"}` {
		t.Errorf("block 1 = %#v, want the stand-in carrying the video block", res.Content[1])
	}
}
