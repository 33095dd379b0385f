package integration

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

// TestEverythingHTTPTransports runs server-everything in its Streamable HTTP and legacy SSE
// modes and connects with an explicit Type and with Type "" (auto: Streamable HTTP, falling
// back to SSE).
func TestEverythingHTTPTransports(t *testing.T) {
	s := requireServers(t)
	modes := []struct {
		mode string // server-everything's argv[2]
		path string
		rows []struct{ name, typ, wantTransport string }
	}{
		{mode: "streamableHttp", path: "/mcp", rows: []struct{ name, typ, wantTransport string }{
			{"http", bridge.TypeHTTP, "http"},
			{"auto", "", "http"},
		}},
		{mode: "sse", path: "/sse", rows: []struct{ name, typ, wantTransport string }{
			{"sse", bridge.TypeSSE, "sse"},
			{"auto falls back to sse", "", "sse"},
		}},
	}
	for _, m := range modes {
		t.Run(m.mode, func(t *testing.T) {
			url := startHTTPServer(t, s, pkgEverything, m.mode) + m.path
			for _, row := range m.rows {
				t.Run(row.name, func(t *testing.T) {
					ctx := testContext(t, testTimeout)
					var mu sync.Mutex
					var statuses []bridge.ServerStatus
					opts := &bridge.Options{OnStatus: func(_ context.Context, st bridge.ServerStatus) {
						mu.Lock()
						defer mu.Unlock()
						statuses = append(statuses, st)
					}}
					cfg := bridge.ServerConfig{ID: "everything", Type: row.typ, URL: url}
					set := connect(t, ctx, []bridge.ServerConfig{cfg}, opts)
					tools := set.Tools()

					mu.Lock()
					if len(statuses) != 1 || statuses[0].Err != nil || statuses[0].Transport != row.wantTransport {
						t.Errorf("OnStatus calls = %+v, want one with Transport %q and no error", statuses, row.wantTransport)
					}
					mu.Unlock()

					if len(tools) < 8 {
						t.Errorf("got %d tools %v, want server-everything's", len(tools), toolNames(tools))
					}
					echo := findTool(t, tools, "everything", "echo")
					out, err := echo.Handler(ctx, json.RawMessage(`{"message":"hi"}`))
					if err != nil || !strings.Contains(out, "Echo: hi") {
						t.Errorf("echo = %q, %v; want Echo: hi", out, err)
					}
					sum := findTool(t, tools, "everything", "get-sum")
					out, err = sum.Handler(ctx, json.RawMessage(`{"a":2,"b":3}`))
					if err != nil || !strings.Contains(out, "5") {
						t.Errorf("get-sum = %q, %v; want 5", out, err)
					}
					if row.typ != "" {
						if got, want := echo.Server.Hash(), apps.ServerHash(row.typ, url); got != want {
							t.Errorf("Server.Hash() = %q, want apps.ServerHash(%q, %q) = %q", got, row.typ, url, want)
						}
					}
					if srv, ok := set.Lookup(echo.Server.Hash()); !ok || srv != echo.Server {
						t.Errorf("Lookup(hash) = %v, %v; want the server", srv, ok)
					}
				})
			}
		})
	}
}
