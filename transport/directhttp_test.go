package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/ttalk/mcpbridge/internal/callheaders"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// rotatingAuth is an auth.OAuthHandler whose token starts stale: the server refuses it,
// Authorize switches to the fresh one.
type rotatingAuth struct {
	mu         sync.Mutex
	token      string
	authorized atomic.Int32
}

func (a *rotatingAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.token}), nil
}

func (a *rotatingAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	a.authorized.Add(1)
	a.mu.Lock()
	a.token = "fresh"
	a.mu.Unlock()
	return nil
}

// TestDirectHTTPGuarantees: a direct Streamable HTTP call on 2026-07-28 (a stateless
// server) and on a stateful session before it gets what go-sdk's requests get: the
// configured and per-call headers, the OAuth bearer token (a 401 runs Authorize and the
// call is retried once), the byte budget (an event over it fails the call with a
// *BudgetError and is recorded), and errors without the endpoint's secrets; on the
// stateful session also go-sdk's Mcp-Session-Id and the negotiated MCP-Protocol-Version.
func TestDirectHTTPGuarantees(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) { testDirectHTTPGuarantees(t, stateless) })
	}
}

func testDirectHTTPGuarantees(t *testing.T, stateless bool) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "g", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 64<<10)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "small", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	var mu sync.Mutex
	var calls []http.Header
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
				mu.Lock()
				calls = append(calls, r.Header.Clone())
				mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	auth := &rotatingAuth{token: "fresh"} // connect with a good token; it goes stale below
	spec := transport.Spec{ID: "g", URL: ts.URL + "/mcp?key=s3cr3t-query", Headers: map[string]string{"X-Tenant": "t-1"},
		OAuth: auth, MaxFrameBytes: 16 << 10}
	c, err := transport.Open(spec, transport.KindHTTP)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	var sopts *mcp.ClientSessionOptions
	if !stateless {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "g-test", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx, c.Transport(), sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); c.Close() })
	v := cs.InitializeResult().ProtocolVersion
	if (cs.ID() == "") != stateless {
		t.Fatalf("session ID %q on a stateless=%v server", cs.ID(), stateless)
	}
	if !c.Direct().DirectCalls(v) {
		t.Fatalf("no direct calls on %s", v)
	}
	opts := &wire.CallOptions{Protocol: v}

	auth.mu.Lock()
	auth.token = "stale"
	auth.mu.Unlock()
	cctx := callheaders.With(ctx, http.Header{"X-User": {"u-7"}})
	res, err := c.Direct().CallTool(cctx, &mcp.CallToolParams{Name: "small", Arguments: json.RawMessage(`{}`)}, opts)
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "ok" {
		t.Fatalf("small: %v, %v", res, err)
	}
	if n := auth.authorized.Load(); n != 1 {
		t.Errorf("Authorize ran %d times, want 1", n)
	}
	mu.Lock()
	got := calls[len(calls)-1]
	mu.Unlock()
	if got.Get("X-Tenant") != "t-1" || got.Get("X-User") != "u-7" || got.Get("Mcp-Protocol-Version") != v || got.Get("Mcp-Session-Id") != cs.ID() {
		t.Errorf("headers on the direct POST: %v (session %q, protocol %s)", got, cs.ID(), v)
	}

	_, err = c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: json.RawMessage(`{}`)}, opts)
	var be *transport.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, transport.ErrMessageTooLarge) || c.Overrun() == nil {
		t.Errorf("big: %v (overrun %v), want a *BudgetError", err, c.Overrun())
	}

	ts.CloseClientConnections() // go-sdk's standalone stream of the stateful session, too
	ts.Close()                  // now the server is gone: the error must not show the query secret
	_, err = c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: "small", Arguments: json.RawMessage(`{}`)}, opts)
	if err == nil || strings.Contains(err.Error(), "s3cr3t-query") {
		t.Errorf("call to a closed server: %v", err)
	}
}
