package bridge_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// ConnectServers with servers that offer the model no tool returns no tools, so the caller
// cannot close anything: the servers it connected must be closed before it returns (the
// app-only one included), never left running.
func TestConnectServersWithoutModelToolsLeavesNothingRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		empty := mcp.NewServer(&mcp.Implementation{Name: "empty", Version: "1"}, nil)
		appOnly := mcp.NewServer(&mcp.Implementation{Name: "app-only", Version: "1"}, nil)
		appOnly.AddTool(&mcp.Tool{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`),
			Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "polled"}}}, nil
			})
		tools := bridge.ConnectServers([]bridge.ServerConfig{inProcess("empty", empty), inProcess("ui", appOnly)})
		if len(tools) != 0 {
			t.Fatalf("ConnectServers = %v, want no tools", names(tools))
		}
		synctest.Wait()
		for id, srv := range map[string]*mcp.Server{"empty": empty, "ui": appOnly} {
			for ss := range srv.Sessions() {
				t.Errorf("server %q: a session is still open after ConnectServers returned no tools", id)
				_ = ss.Close()
			}
		}
	})
}
