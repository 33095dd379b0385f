package transport_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// videoResult is the raw server's tools/call result: blocks of types go-sdk does not know
// (a video, and a nested one in a tool_result) between text blocks. A go-sdk server cannot
// send them, so the server is written against JSON-RPC directly.
const videoResult = `{"content":[{"type":"text","text":"before"},{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"},{"type":"tool_result","toolUseId":"u","content":[{"type":"hologram","size":12}]},{"type":"text","text":"after"}]}`

// rawVideoServer is a stdio MCP server answering initialize, tools/list (one tool) and
// tools/call (videoResult), without go-sdk.
func rawVideoServer() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue // notifications
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"video","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"video","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = videoResult
		default:
			result = `{}`
		}
		fmt.Fprintf(os.Stdout, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
	return 0
}

// TestUnknownContentTolerated: a result with content blocks of types go-sdk does not know
// reaches the caller, through go-sdk's session and the direct client alike, with its text
// blocks and a stand-in for each unknown block carrying it as sent.
func TestUnknownContentTolerated(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			c, err := transport.Open(stdioSpec(t, "video", "video"), transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			cs := session(t, ctx, c)
			p := &mcp.CallToolParams{Name: "video", Arguments: map[string]any{}}
			var res *mcp.CallToolResult
			if direct {
				res, err = c.Direct().CallTool(ctx, p, &wire.CallOptions{Protocol: "2025-11-25"})
			} else {
				res, err = cs.CallTool(ctx, p)
			}
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if len(res.Content) != 4 {
				t.Fatalf("%d blocks, want 4", len(res.Content))
			}
			for i, want := range map[int]string{0: "before", 3: "after"} {
				if tc, ok := res.Content[i].(*mcp.TextContent); !ok || tc.Text != want {
					t.Errorf("block %d = %#v, want the text %q", i, res.Content[i], want)
				}
			}
			standIn := func(c mcp.Content) string {
				tc, ok := c.(*mcp.TextContent)
				if !ok || tc.Text != "" {
					return ""
				}
				s, _ := tc.Meta[wire.UnknownContentKey].(string)
				return s
			}
			if got, want := standIn(res.Content[1]), `{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"}`; got != want {
				t.Errorf("block 1 carries %q, want the video block %q", got, want)
			}
			//lint:ignore SA1019 a server may still send tool_result blocks in a CallToolResult
			tr, ok := res.Content[2].(*mcp.ToolResultContent)
			if !ok || len(tr.Content) != 1 || standIn(tr.Content[0]) != `{"type":"hologram","size":12}` {
				t.Errorf("block 2 = %#v, want a tool_result carrying the hologram block", res.Content[2])
			}
		})
	}
}
