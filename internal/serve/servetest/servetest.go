// Package servetest holds the fixtures of mcpbridge serve's tests, shared by internal/serve's
// own tests and the browser tests in the integration module (which need chromedp): a go-sdk
// server with an MCP App, a server whose tool runs as an MCP task and asks for input, and
// hosts serving them on loopback until the test ends.
package servetest

import (
	"context"
	_ "embed"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/internal/serve"
)

//go:embed testdata/fixture-app.html
var fixtureApp string

const fixtureURI = "ui://fixture/app.html"

// FixtureServer is a go-sdk MCP server over Streamable HTTP with an App tool ("counter",
// rendering ui://fixture/app.html), an app-only tool ("bump"), a model-only tool ("secret")
// and an ordinary tool with a schema a form can express ("greet").
func FixtureServer(t testing.TB, csp map[string]any) string {
	t.Helper()
	var count atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.0.0"}, &mcp.ServerOptions{Instructions: "Greet people with greet.\n<script>alert(1)</script>"})
	counter := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := count.Add(1)
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "count is " + strconv.FormatInt(n, 10)}},
			StructuredContent: map[string]any{"count": n},
		}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "counter", Description: "Counts, with a UI.", InputSchema: json.RawMessage(`{"type":"object","properties":{"label":{"type":"string"}}}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": fixtureURI}}}, counter)
	srv.AddTool(&mcp.Tool{Name: "bump", Description: "Counts (for the App only).", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}}, counter)
	srv.AddTool(&mcp.Tool{Name: "secret", Description: "Only the model may call this.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the secret"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "greet", Description: "Greets <b>someone</b>.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"who"},"times":{"type":"integer"},"loud":{"type":"boolean"},"mood":{"enum":["happy","sad"]}},"required":["name"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Name  string `json:"name"`
				Times int    `json:"times"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			if a.Name == "error" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no greeting for error"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<img src=x onerror=alert(1)> hello " + a.Name}}}, nil
		})
	meta := mcp.Meta{}
	if csp != nil {
		meta["ui"] = map[string]any{"csp": csp}
	}
	srv.AddResource(&mcp.Resource{URI: fixtureURI, Name: "fixture app", MIMEType: apps.ResourceMIMEType},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: fixtureURI, MIMEType: apps.ResourceMIMEType, Text: fixtureApp, Meta: meta}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// StartHost connects cfgs and serves them; everything stops when the test ends.
func StartHost(t testing.TB, cfgs []bridge.ServerConfig) *serve.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	var order []string
	for _, c := range cfgs {
		order = append(order, c.ID)
	}
	h, err := serve.Listen(serve.Options{Set: set, Order: order, Version: "test", Tokens: tokens.New()})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(sctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return h
}

// AskServer is a go-sdk server with one tool, "greet-later", that runs as an MCP task (the
// 2026-07-28 tasks extension, spoken through custom methods): the task reports "looking",
// then asks for a name (input_required) and completes with a greeting once answered.
func AskServer() *mcp.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/tasks", map[string]any{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	srv.AddTool(&mcp.Tool{Name: "greet-later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no task asked for"}}}, nil
		})
	var mu sync.Mutex
	polls, name := 0, ""
	task := func(status, msg string) map[string]any {
		return map[string]any{"taskId": "greet-1", "status": status, "statusMessage": msg, "createdAt": "2026-01-01T00:00:00Z",
			"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil, "pollIntervalMs": 50}
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			m := task("working", "queued")
			m["resultType"] = "task"
			return rawResult(m), nil
		}
	})
	type params struct {
		mcp.ParamsBase
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/get", func(context.Context, *mcp.ServerSession, *params) (*jsonBody, error) {
		mu.Lock()
		defer mu.Unlock()
		polls++
		switch {
		case polls == 1:
			return rawResult(task("working", "looking")), nil
		case name == "":
			m := task("input_required", "who is it?")
			m["inputRequests"] = map[string]any{"who": map[string]any{"method": "elicitation/create", "params": map[string]any{
				"mode": "form", "message": "Whom shall I greet?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
			}}}
			return rawResult(m), nil
		}
		m := task("completed", "done")
		m["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello " + name}}}
		return rawResult(m), nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/update", func(_ context.Context, _ *mcp.ServerSession, p *params) (*jsonBody, error) {
		var ans struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		_ = json.Unmarshal(p.InputResponses["who"], &ans)
		mu.Lock()
		name = ans.Action + ":" + ans.Content.Name
		mu.Unlock()
		return rawResult(map[string]any{}), nil
	})
	return srv
}

type jsonBody struct {
	mcp.ResultBase
	b []byte
}

func (j *jsonBody) MarshalJSON() ([]byte, error) { return j.b, nil }

func rawResult(v any) *jsonBody {
	b, _ := json.Marshal(v)
	return &jsonBody{b: b}
}

// StartAskHost serves AskServer with the page following calls (as mcpbridge serve does).
func StartAskHost(t testing.TB) *serve.Host {
	t.Helper()
	srv := AskServer()
	calls := serve.NewCalls()
	cfg := bridge.ServerConfig{ID: "ask", InProcess: func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.DiscardHandler), OnElicitation: calls.Elicit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	h, err := serve.Listen(serve.Options{Set: set, Calls: calls, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(sctx) }()
	t.Cleanup(func() { stop(); <-done })
	return h
}
