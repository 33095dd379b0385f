package serve_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// fixtureServer is a go-sdk MCP server over Streamable HTTP with an App tool ("counter",
// rendering ui://fixture/app.html), an app-only tool ("bump"), a model-only tool ("secret")
// and an ordinary tool with a schema a form can express ("greet").
func fixtureServer(t *testing.T, csp map[string]any) string {
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

// startHost connects cfgs and serves them; everything stops when the test ends.
func startHost(t *testing.T, cfgs []bridge.ServerConfig) *serve.Host {
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
