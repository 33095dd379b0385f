package bridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// orderedStructured is a structured content whose keys are not sorted, at every level.
const orderedStructured = `{"zeta":1,"alpha":{"y":true,"b":[3,1]},"mid":"m"}`

// orderedServer serves "ordered", which answers orderedStructured with the usual
// pretty-printed copy as text, and "app", an App tool with the same result.
func orderedServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ordered", Version: "1"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(orderedStructured),
			Content:           []mcp.Content{&mcp.TextContent{Text: "{\n  \"zeta\": 1,\n  \"alpha\": {\"y\": true, \"b\": [3, 1]},\n  \"mid\": \"m\"\n}"}},
		}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "ordered", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	srv.AddTool(&mcp.Tool{Name: "app", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://ordered/app.html"}}}, handler)
	return srv
}

// TestStructuredKeyOrder: the model reads a result's structured content as the server sent
// it, compacted, in its key order (not go-sdk's decoded map's sorted keys), with the text
// copy dropped, on the direct path (in-process, Streamable HTTP on 2026-07-28 and a
// stateful session before it) and on go-sdk's (a stateful session that declared
// elicitation); the raw result (CallTool) and an App tool's content stay as they were.
func TestStructuredKeyOrder(t *testing.T) {
	srvHTTP := func(stateless bool) bridge.ServerConfig {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return orderedServer() },
			&mcp.StreamableHTTPOptions{Stateless: stateless, Logger: discard()})
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return bridge.ServerConfig{ID: "h", Type: bridge.TypeHTTP, URL: ts.URL + "/mcp"}
	}
	for _, tc := range []struct {
		name   string
		cfg    func() bridge.ServerConfig
		opts   *bridge.Options
		direct bool
	}{
		{"inprocess", func() bridge.ServerConfig { return inProcess("m", orderedServer()) }, nil, true},
		{"http stateless", func() bridge.ServerConfig { return srvHTTP(true) }, nil, true},
		{"http stateful", func() bridge.ServerConfig { return srvHTTP(false) }, nil, true},
		{"http stateful with elicitation", func() bridge.ServerConfig { return srvHTTP(false) }, eliciting(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := dialT(t, tc.cfg(), tc.opts)
			tools := map[string]bridge.Tool{}
			for _, tool := range s.Tools() {
				tools[tool.RemoteName] = tool
			}
			out, err := tools["ordered"].Handler(ctxT(t, 20*time.Second), nil)
			if err != nil || out != orderedStructured {
				t.Errorf("Handler() = %q, %v; want %q", out, err, orderedStructured)
			}
			inv, err := tools["ordered"].Invoke(ctxT(t, 20*time.Second), nil)
			if err != nil || inv.Text != orderedStructured {
				t.Errorf("Invoke().Text = %q, %v; want %q", inv.Text, err, orderedStructured)
			}
			app, err := tools["app"].Handler(ctxT(t, 20*time.Second), nil)
			if err != nil || app[0] != '{' || app[1] != '\n' {
				t.Errorf("App tool: Handler() = %q, %v; want its text content", app, err)
			}
			res, err := s.CallTool(ctxT(t, 20*time.Second), "ordered", nil)
			if err != nil || len(res.Content) != 1 {
				t.Fatalf("CallTool() = %v, %v; want the raw result", res, err)
			}
			direct, sdk := s.CallPaths()
			if (direct > 0) != tc.direct || (sdk > 0) == tc.direct {
				t.Errorf("calls by path (direct, go-sdk) = %d, %d; want all on the direct path: %v", direct, sdk, tc.direct)
			}
		})
	}
}

// TestStructuredKeyOrderTask: when the server runs a Handler's call as a task, the model
// reads the task's result's structured content in the server's key order too (from
// tasks/result under 2025-11-25, from tasks/get's inline result under 2026-07-28), with
// the text copy dropped.
func TestStructuredKeyOrderTask(t *testing.T) {
	result := `{"content":[{"type":"text","text":"{\n  \"zeta\": 1,\n  \"alpha\": {\"y\": true, \"b\": [3, 1]},\n  \"mid\": \"m\"\n}"}],"structuredContent":` + orderedStructured + `}`
	for _, ext := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.tool("ordered", "required", func(_ context.Context, tk *fxTask) {
					tk.update(func(tk *fxTask) { tk.status, tk.result = "completed", json.RawMessage(result) })
				})
				s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				out, err := taskTool(t, s, "ordered").Handler(t.Context(), nil)
				if err != nil || out != orderedStructured {
					t.Errorf("Handler() = %q, %v; want %q", out, err, orderedStructured)
				}
				fx.mu.Lock()
				defer fx.mu.Unlock()
				if asTask := fx.lastCallAsksTask() || (ext && fx.declaredExt[len(fx.declaredExt)-1]); !asTask {
					t.Errorf("the call did not run as a task")
				}
			})
		})
	}
}
