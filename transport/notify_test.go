package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

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

// rawStreamable is a Streamable HTTP server (2025-11-25) written by hand: it initializes,
// and its standalone GET stream carries notifications go-sdk does not know, as a task
// server's status notifications do.
func rawStreamable(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: "+`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}}`+"\n\n")
			fmt.Fprint(w, "data: "+`{"jsonrpc":"2.0","method":"notifications/unfollowed","params":{}}`+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		case http.MethodDelete:
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Method != "initialize" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, req.ID)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// On Streamable HTTP the RoundTripper's tee of an event stream hands the host the
// notifications it asked for.
func TestOnNotificationsStreamable(t *testing.T) {
	ts := rawStreamable(t)
	c, err := transport.Open(transport.Spec{ID: "raw", URL: ts.URL}, transport.KindHTTP)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	c.OnNotifications([]string{"notifications/tasks/status"}, func(method string, params json.RawMessage) {
		got <- method + " " + string(params)
	})
	session(t, t.Context(), c)
	select {
	case g := <-got:
		if want := `notifications/tasks/status {"taskId":"t1","status":"completed"}`; g != want {
			t.Errorf("handed %q, want %q", g, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the GET stream's notification was not handed over within 30s")
	}
	select {
	case g := <-got:
		t.Errorf("handed %q too", g)
	default:
	}
}
