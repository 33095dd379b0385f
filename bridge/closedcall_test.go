package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// With hooks set, a call after Close fails "server closed" (kind server_closed), as
// Server.Close promises, also the first call of a tool, whose schema is compiled on first
// use: never "compiling the schema did not finish in time: context canceled". (Whether the
// compile or the cancelled context comes first is a race; 200 tools make it show.)
func TestCallAfterCloseWithHooks(t *testing.T) {
	const n = 200
	srv := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range n {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%03d", i),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}}}`, i))},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	var audit auditLog
	set, err := connectSet(t, []bridge.ServerConfig{inProcess("many", srv)}, &bridge.Options{Logger: discard(), AfterCall: audit.after})
	if err != nil {
		t.Fatal(err)
	}
	tools := set.Tools()
	if len(tools) != n {
		t.Fatalf("%d tools, want %d", len(tools), n)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for _, tool := range tools {
		_, err := tool.Handler(ctxT(t, 30*time.Second), json.RawMessage(`{}`))
		_, end := audit.last(t)
		var se *bridge.ServerError
		if !errors.As(err, &se) || !errors.Is(err, bridge.ErrServerClosed) || !strings.Contains(err.Error(), "server closed") || end.Outcome != bridge.OutcomeServerClosed {
			if wrong++; wrong <= 3 {
				t.Errorf("%s after Close: %v (outcome %q), want a server closed error", tool.Name, err, end.Outcome)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d calls after Close did not fail with server closed", wrong, n)
	}
}
