package bridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// A 2025-11-25 Streamable HTTP server restarts (its sessions are gone) while a call it
// accepted is running: go-sdk's reconnecting standalone GET gets 404 (session not found),
// which fails the session and the call with it. The call's POST was taken by the server, so
// it is not sent again on a new session (a tool not marked idempotent would run twice: the
// soak saw it about one run in three); the error says it may have run.
func TestSessionLostAfterTheCallWasAccepted(t *testing.T) {
	var runs atomic.Int64
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	newHandler := func() http.Handler {
		srv := mcp.NewServer(&mcp.Implementation{Name: "restarts", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "charge", Description: "charges a card once"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			runs.Add(1)
			// A request to the client on the call's stream: its response headers and first
			// event are out, so the client has the stream when the server restarts.
			_ = req.Session.Ping(ctx, nil)
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "charged"}}}, nil, nil
		})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: discard()})
	}
	var mu sync.Mutex
	current := newHandler()
	getsCtx, endGets := context.WithCancel(context.Background()) // the standalone GET streams'
	defer endGets()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h, gets := current, getsCtx
		mu.Unlock()
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(gets, cancel)
			defer stop()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	defer close(release)

	opts := quiet()
	opts.CallTimeout = 30 * time.Second
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "pay", URL: hs.URL, ProtocolVersion: "2025-11-25"}}, opts)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	tools := set.Tools()
	if len(tools) != 1 {
		t.Fatalf("tools: %v", names(tools))
	}
	done := make(chan error, 1)
	go func() {
		_, err := tools[0].Handler(context.Background(), []byte(`{}`))
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the server")
	}
	// The restart: the old session is unknown from now on. Its standalone GET stream ends
	// first (go-sdk reconnects it and gets 404: session not found) while the call's own
	// stream is still open on the old server.
	mu.Lock()
	current, getsCtx = newHandler(), context.Background()
	mu.Unlock()
	endGets()

	var callErr error
	select {
	case callErr = <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("the call did not end")
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once: a call the server accepted was sent again", n)
	}
	if callErr == nil || !strings.Contains(callErr.Error(), "may have run on the server") {
		t.Errorf("call error: %v, want the session-ended-during-the-request error", callErr)
	}
}
