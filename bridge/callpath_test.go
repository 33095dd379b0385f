package bridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// TestDefaultCallPath fails when a tools/call with the default configuration leaves the
// direct path: over stdio and in-process on both the negotiated protocol (2026-07-28) and
// the pinned 2025-11-25, and over Streamable HTTP on 2026-07-28 (a stateless server) and
// before it (a stateful server's session, a stateless server pinned to 2025-11-25). A
// Streamable HTTP session before 2026-07-28 whose client answers the server's requests
// (Options.OnElicitation: go-sdk's handler) is the one kind that stays on go-sdk's path, and
// the test pins that too, so that a change of path shows. Each case also checks the
// protocol version the session got, so a negotiation that silently falls back cannot pass
// for the modern case.
func TestDefaultCallPath(t *testing.T) {
	srvHTTP := func(stateless bool) bridge.ServerConfig {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newFixture("basic", nil) },
			&mcp.StreamableHTTPOptions{Stateless: stateless, Logger: discard()})
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return bridge.ServerConfig{ID: "h", Type: bridge.TypeHTTP, URL: ts.URL + "/mcp"}
	}
	for _, tc := range []struct {
		name    string
		cfg     func() bridge.ServerConfig
		pin     string
		version string
		direct  bool
	}{
		{"stdio", func() bridge.ServerConfig { return stdioConfig(t, "s", "basic") }, "", "2026-07-28", true},
		{"stdio pinned", func() bridge.ServerConfig { return stdioConfig(t, "s", "basic") }, "2025-11-25", "2025-11-25", true},
		{"inprocess", func() bridge.ServerConfig { return inProcess("m", newFixture("basic", nil)) }, "", "2026-07-28", true},
		{"inprocess pinned", func() bridge.ServerConfig { return inProcess("m", newFixture("basic", nil)) }, "2025-11-25", "2025-11-25", true},
		{"http stateless", func() bridge.ServerConfig { return srvHTTP(true) }, "", "2026-07-28", true},
		{"http stateless pinned", func() bridge.ServerConfig { return srvHTTP(true) }, "2025-11-25", "2025-11-25", true},
		{"http stateful", func() bridge.ServerConfig { return srvHTTP(false) }, "", "2025-11-25", true},
		{"http stateful with elicitation", func() bridge.ServerConfig { return srvHTTP(false) }, "", "2025-11-25", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			cfg.ProtocolVersion = tc.pin
			opts := quiet()
			if tc.name == "http stateful with elicitation" {
				opts = eliciting()
			}
			s := dialT(t, cfg, opts)
			if v := s.Status().ProtocolVersion; v != tc.version {
				t.Fatalf("protocol %q, want %q (%s)", v, tc.version, s.Status().Negotiation)
			}
			var add bridge.Tool
			for _, tool := range s.Tools() {
				if tool.RemoteName == "add" {
					add = tool
				}
			}
			const n = 3
			for range n {
				out, err := add.Handler(ctxT(t, 20*time.Second), json.RawMessage(`{"a":40,"b":2}`))
				if err != nil || out != "42" {
					t.Fatalf("add = %q, %v", out, err)
				}
			}
			if _, err := s.CallTool(ctxT(t, 20*time.Second), "add", json.RawMessage(`{"a":1,"b":2}`)); err != nil {
				t.Fatal(err)
			}
			direct, sdk := s.CallPaths()
			want := [2]int64{0, n + 1}
			if tc.direct {
				want = [2]int64{n + 1, 0}
			}
			if got := [2]int64{direct, sdk}; got != want {
				t.Errorf("calls by path (direct, go-sdk) = %v, want %v", got, want)
			}
		})
	}
}

// TestCallEnvelopeDeclaresWhatMatters: on 2026-07-28 a direct call declares the MCP Apps
// extension only when it calls an App tool, and the tasks extension only to a server that
// offers tasks (the server decodes the capabilities of every request); go-sdk's own
// requests (the listing) keep the whole set.
func TestCallEnvelopeDeclaresWhatMatters(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "env", Version: "1"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	srv.AddTool(&mcp.Tool{Name: "app", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://env/app.html"}}}, handler)
	var mu sync.Mutex
	extsOf := map[string][]string{} // method or tool -> the extensions declared
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			key := method
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				key = p.Name
			}
			var exts []string
			if caps, ok := req.GetParams().GetMeta()["io.modelcontextprotocol/clientCapabilities"].(map[string]any); ok {
				if e, ok := caps["extensions"].(map[string]any); ok {
					for k := range e {
						exts = append(exts, k)
					}
				}
			}
			slices.Sort(exts)
			mu.Lock()
			extsOf[key] = exts
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	s := dialT(t, inProcess("env", srv), nil)
	for _, name := range []string{"plain", "app"} {
		if _, err := s.CallTool(ctxT(t, 20*time.Second), name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if direct, _ := s.CallPaths(); direct != 2 {
		t.Fatalf("%d direct calls, want 2", direct)
	}
	mu.Lock()
	defer mu.Unlock()
	for key, want := range map[string][]string{
		"tools/list": {"io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui"},
		"plain":      nil,
		"app":        {"io.modelcontextprotocol/ui"},
	} {
		if got := extsOf[key]; !slices.Equal(got, want) {
			t.Errorf("%s declared extensions %v, want %v", key, got, want)
		}
	}
}

// TestInvokeResultMetaIsItsOwn: a Handler may share the connection's decoded result _meta,
// but what Tool.Invoke returns is the caller's to change: changing it reaches no later result.
func TestInvokeResultMetaIsItsOwn(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "meta", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "m", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Meta: mcp.Meta{"k": map[string]any{"v": "server"}}, Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	s := dialT(t, inProcess("meta", srv), nil)
	tool := s.Tools()[0]
	ctx := ctxT(t, 20*time.Second)
	for range 2 { // the Handler path, which shares the decoded _meta
		if _, err := tool.Handler(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	inv, err := tool.Invoke(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	inv.Result.Meta["k"].(map[string]any)["v"] = "changed"
	inv.Result.Meta["added"] = true
	again, err := tool.Invoke(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := again.Result.Meta["k"].(map[string]any)["v"]; v != "server" || again.Result.Meta["added"] != nil {
		t.Errorf("a caller's change to an Invoke result reached the next one: %v", again.Result.Meta)
	}
	if direct, _ := s.CallPaths(); direct != 4 {
		t.Errorf("%d direct calls, want 4", direct)
	}
}

// eliciting is quiet with an elicitation handler: a Streamable HTTP session before
// 2026-07-28 then declares elicitation and its calls stay on go-sdk's path, whose handler
// answers the server's requests on a call's stream (internal/wire stateful.go).
func eliciting() *bridge.Options {
	o := quiet()
	o.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return o
}
