package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/transport"
)

// notifierServer is a go-sdk stdio server whose tool "notify" writes, before its answer,
// notifications go-sdk does not know (as a task server's status notifications are).
func notifierServer() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "notifier", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "notify", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// One write, under PIPE_BUF: not interleaved with the transport's own.
			fmt.Fprint(os.Stdout, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/unfollowed","params":{}}`+"\n"+
				`[{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t2","status":"working"}}]`+"\n")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
	}
	return 0
}

// A stdio connection hands the host the notifications it asked for (OnNotifications), in
// order and before the answer that follows them, and passes the others to go-sdk.
func TestOnNotificationsStdio(t *testing.T) {
	c, err := transport.Open(stdioSpec(t, "notifier", "notifier"), transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	c.OnNotifications([]string{"notifications/tasks/status"}, func(method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, method+" "+string(params))
	})
	cs := session(t, t.Context(), c)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "notify"})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`notifications/tasks/status {"taskId":"t1","status":"completed"}`,
		`notifications/tasks/status {"taskId":"t2","status":"working"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("handed %q, want %q", got, want)
	}
}
