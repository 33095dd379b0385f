// Package tracing_test holds the bridge's tests and example that need the OpenTelemetry SDK
// (tracetest, sdkmetric): they live in the integration module so that the library's go.mod
// requires only the otel API. The helpers below are copies of bridge's own test helpers.
package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func connectSet(t testing.TB, cfgs []bridge.ServerConfig, opts *bridge.Options) (*bridge.Set, error) {
	t.Helper()
	if opts == nil {
		opts = &bridge.Options{Logger: discard()}
	}
	set, err := bridge.Connect(ctxT(t, 60*time.Second), cfgs, opts)
	if set != nil {
		t.Cleanup(func() { _ = set.Close() })
	}
	return set, err
}

func byName(t testing.TB, tools bridge.Tools, name string) bridge.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	t.Fatalf("no tool %q in %v", name, names)
	return bridge.Tool{}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func ptr[T any](v T) *T { return &v }

const (
	addSchema   = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`
	emptySchema = `{"type":"object"}`
)

type hookServer struct {
	calls atomic.Int64

	mu      sync.Mutex
	metas   []map[string]any // params._meta of each tools/call, in order
	headers []http.Header    // HTTP headers of each tools/call POST (http servers only)
}

func (h *hookServer) lastMeta() map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.metas) == 0 {
		return nil
	}
	return h.metas[len(h.metas)-1]
}

func (h *hookServer) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hooks", Version: "1"}, nil)
	add := func(t *mcp.Tool, out func(*mcp.CallToolRequest) *mcp.CallToolResult) {
		srv.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.calls.Add(1)
			h.mu.Lock()
			h.metas = append(h.metas, map[string]any(req.Params.Meta))
			h.mu.Unlock()
			return out(req), nil
		})
	}
	add(&mcp.Tool{Name: "delete_file", Title: "Delete a file", Description: "Deletes a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(req *mcp.CallToolRequest) *mcp.CallToolResult { return text("deleted") })
	add(&mcp.Tool{Name: "read_file", Description: "Reads a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(req *mcp.CallToolRequest) *mcp.CallToolResult {
			return text("contents of " + string(req.Params.Arguments))
		})
	add(&mcp.Tool{Name: "broken", Description: "Fails.", InputSchema: json.RawMessage(emptySchema)},
		func(*mcp.CallToolRequest) *mcp.CallToolResult {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}
		})
	add(&mcp.Tool{Name: "app_refresh", Description: "App only.", InputSchema: json.RawMessage(emptySchema),
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
		func(*mcp.CallToolRequest) *mcp.CallToolResult { return text("refreshed") })
	return srv
}

func (h *hookServer) inProcess(id string) bridge.ServerConfig {
	srv := h.server()
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func (h *hookServer) http(t testing.TB, id string) bridge.ServerConfig {
	srv := h.server()
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h.mu.Lock()
			h.headers = append(h.headers, r.Header.Clone())
			h.mu.Unlock()
		}
		mh.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return bridge.ServerConfig{ID: id, URL: ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer shared"}}
}

type auditLog struct {
	mu   sync.Mutex
	ends []bridge.CallEnd
	seen []bridge.Call
}

func (a *auditLog) after(_ context.Context, c *bridge.Call, e *bridge.CallEnd) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cc := *c
	cc.Args = append(json.RawMessage(nil), c.Args...)
	a.seen = append(a.seen, cc)
	a.ends = append(a.ends, *e)
}

func (a *auditLog) last(t *testing.T) (bridge.Call, bridge.CallEnd) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ends) == 0 {
		t.Fatal("AfterCall was not called")
	}
	return a.seen[len(a.seen)-1], a.ends[len(a.ends)-1]
}

func docsServer(prompts bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", Description: "Searches.", InputSchema: json.RawMessage(emptySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("found"), nil })
	srv.AddResource(&mcp.Resource{URI: "file:///readme.md", Name: "readme", MIMEType: "text/markdown", Description: "The readme."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Read me\nfirst"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "file:///logo.png", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: make([]byte, 3000)}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///notes/{id}", Name: "note"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "note " + strings.TrimPrefix(req.Params.URI, "file:///notes/")}}}, nil
		})
	if prompts {
		srv.AddPrompt(&mcp.Prompt{Name: "review", Description: "Reviews code.", Arguments: []*mcp.PromptArgument{{Name: "lang", Required: true}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "A review.", Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: "Review this " + req.Params.Arguments["lang"] + " code."}},
					{Role: "assistant", Content: &mcp.TextContent{Text: "Sure."}},
				}}, nil
			})
	}
	return srv
}

func inProcess(id string, srv *mcp.Server) bridge.ServerConfig {
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func filesServer() *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	srv.AddTool(&mcp.Tool{Name: "delete_file", Title: "Delete a file", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("deleted"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "read_file", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("hello"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var keys []string
			for k, v := range req.Params.Meta {
				if k != "traceparent" && k != "tracestate" {
					keys = append(keys, fmt.Sprintf("%s=%v", k, v))
				}
			}
			sort.Strings(keys)
			return text("authorization: " + req.Extra.Header.Get("Authorization") + ", _meta: " + strings.Join(keys, " ")), nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}
