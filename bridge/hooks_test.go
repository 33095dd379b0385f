package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// hookServer is a real go-sdk server for the hook tests: it counts calls per tool and
// remembers the _meta and HTTP headers each call arrived with.
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

func ptr[T any](v T) *T { return &v }

// inProcess serves h in this process.
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

// http serves h over Streamable HTTP, recording the headers of tools/call POSTs.
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

// auditLog collects AfterCall reports.
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

// denyDestructive is an approval policy: destructive tools are refused.
func denyDestructive(_ context.Context, c *bridge.Call) error {
	if a := c.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
		return bridge.Deny(c.Title + " needs a human's approval")
	}
	return nil
}

func TestDeniedCallsNeverReachTheServer(t *testing.T) {
	var hs hookServer
	var audit auditLog
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{
		Logger: discard(), BeforeCall: denyDestructive, AfterCall: audit.after,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := set.Lookup("files")
	del := byName(t, set.Tools(), "delete_file")
	tests := []struct {
		name   string
		origin bridge.Origin
		call   func() error
	}{
		{"handler", bridge.OriginHandler, func() error {
			out, err := del.Handler(ctxT(t, 30*time.Second), json.RawMessage(`{"path":"/etc"}`))
			if want := "tool call denied: Delete a file needs a human's approval"; out != want {
				t.Errorf("the model reads %q, want %q", out, want)
			}
			return err
		}},
		{"call tool", bridge.OriginCallTool, func() error {
			res, err := srv.CallTool(ctxT(t, 30*time.Second), "delete_file", json.RawMessage(`{"path":"/etc"}`))
			if res != nil {
				t.Errorf("a denied CallTool returned a result: %+v", res)
			}
			return err
		}},
		{"app", bridge.OriginApp, func() error {
			_, err := set.Proxy(ctxT(t, 30*time.Second), apps.ProxyRequest{ServerID: "files", Method: "tools/call",
				Params: json.RawMessage(`{"name":"delete_file","arguments":{"path":"/etc"}}`)})
			if !errors.Is(err, apps.ErrToolNotAllowed) {
				t.Errorf("App denial %v does not wrap apps.ErrToolNotAllowed (the proxy's 403)", err)
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var d *bridge.DeniedError
			if !errors.As(err, &d) || !errors.Is(err, bridge.ErrDenied) || d.Tool != "delete_file" {
				t.Fatalf("err = %v (%T), want a *DeniedError for delete_file", err, err)
			}
			if n := hs.calls.Load(); n != 0 {
				t.Fatalf("the server ran %d calls; a denied call must never reach it", n)
			}
			c, end := audit.last(t)
			if c.Origin != tt.origin || end.Outcome != bridge.OutcomeDenied || !errors.Is(end.Err, bridge.ErrDenied) || end.ResultBytes != 0 {
				t.Errorf("AfterCall saw origin %v, kind %q, err %v, %d result bytes", c.Origin, end.Outcome, end.Err, end.ResultBytes)
			}
		})
	}
	// An allowed call goes through, and is reported with its sizes.
	out, err := byName(t, set.Tools(), "read_file").Handler(ctxT(t, 30*time.Second), json.RawMessage(`{"path":"/a"}`))
	if err != nil || hs.calls.Load() != 1 {
		t.Fatalf("allowed call: %q, %v (server calls %d)", out, err, hs.calls.Load())
	}
	_, end := audit.last(t)
	if end.Outcome != bridge.OutcomeOK || end.ResultBytes != len(out) || end.ArgsBytes != len(`{"path":"/a"}`) || end.Duration <= 0 {
		t.Errorf("AfterCall for an allowed call: %+v", end)
	}
}

func TestBeforeCallSeesTheTool(t *testing.T) {
	var hs hookServer
	var mu sync.Mutex
	var got []bridge.Call
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{
		Logger: discard(),
		BeforeCall: func(_ context.Context, c *bridge.Call) error {
			mu.Lock()
			defer mu.Unlock()
			cc := *c
			cc.Args = append(json.RawMessage(nil), c.Args...)
			got = append(got, cc)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := set.Lookup("files")
	ctx := ctxT(t, 30*time.Second)
	if _, err := byName(t, set.Tools(), "delete_file").Handler(ctx, json.RawMessage(`{"path":"/tmp/x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := byName(t, set.Tools(), "read_file").Handler(ctx, json.RawMessage(`null`)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.CallTool(ctx, "read_file", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Proxy(ctx, apps.ProxyRequest{ServerID: "files", Method: "tools/call", Params: json.RawMessage(`{"name":"app_refresh"}`)}); err != nil {
		t.Fatal(err)
	}
	// Invalid arguments never reach BeforeCall.
	if _, err := byName(t, set.Tools(), "delete_file").Handler(ctx, json.RawMessage(`{"path":1}`)); !errors.Is(err, bridge.ErrInvalidArguments) {
		t.Fatalf("invalid arguments: %v", err)
	}
	want := []bridge.Call{
		{Origin: bridge.OriginHandler, Method: "tools/call", Tool: "delete_file", RemoteName: "delete_file", Server: srv, Title: "Delete a file", Args: json.RawMessage(`{"path":"/tmp/x"}`)},
		{Origin: bridge.OriginHandler, Method: "tools/call", Tool: "read_file", RemoteName: "read_file", Server: srv, Args: json.RawMessage(`{}`)},
		{Origin: bridge.OriginCallTool, Method: "tools/call", Tool: "read_file", RemoteName: "read_file", Server: srv, Args: json.RawMessage(`{}`)},
		{Origin: bridge.OriginApp, Method: "tools/call", Tool: "", RemoteName: "app_refresh", Server: srv, Args: json.RawMessage(`{}`)},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("BeforeCall ran %d times, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Origin != w.Origin || g.Method != w.Method || g.Tool != w.Tool || g.RemoteName != w.RemoteName || g.Server != w.Server ||
			g.Title != w.Title || string(g.Args) != string(w.Args) {
			t.Errorf("call %d: got %+v\nwant %+v", i, g, w)
		}
	}
	if a := got[0].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete_file annotations = %+v, want destructiveHint", a)
	}
	if a := got[1].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("read_file annotations = %+v, want readOnlyHint", a)
	}
}

// A BeforeCall waiting for a human is bounded by the call timeout, the caller's ctx and
// Close, even when it ignores its ctx; the call never reaches the server.
func TestBeforeCallWaitIsBounded(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stubborn := func(context.Context, *bridge.Call) error { <-release; return nil } // ignores ctx
	tests := []struct {
		name     string
		timeout  time.Duration
		ctx      func() (context.Context, context.CancelFunc)
		close    bool
		wantKind bridge.Outcome
	}{
		{"call timeout", 300 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, false, bridge.OutcomeTimeout},
		{"caller ctx cancelled", time.Minute, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}, false, bridge.OutcomeCanceled},
		{"server closed", time.Minute, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true, bridge.OutcomeServerClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hs hookServer
			var audit auditLog
			set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{
				Logger: discard(), CallTimeout: tt.timeout, BeforeCall: stubborn, AfterCall: audit.after,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := tt.ctx()
			defer cancel()
			if tt.close {
				time.AfterFunc(200*time.Millisecond, func() { _ = set.Close() })
			}
			done := make(chan error, 1)
			go func() {
				_, err := byName(t, set.Tools(), "delete_file").Handler(ctx, json.RawMessage(`{"path":"/"}`))
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the call waited for BeforeCall past its bounds")
			}
			var se *bridge.ServerError
			if !errors.As(err, &se) || se.Phase != bridge.PhaseCall {
				t.Errorf("err = %v, want a tools/call *ServerError", err)
			}
			if hs.calls.Load() != 0 {
				t.Error("the call reached the server without a decision")
			}
			if _, end := audit.last(t); end.Outcome != tt.wantKind {
				t.Errorf("AfterCall kind = %q (err %v), want %q", end.Outcome, end.Err, tt.wantKind)
			}
		})
	}
}

func TestAfterCallOutcomes(t *testing.T) {
	var hs hookServer
	var audit auditLog
	hookErr := errors.New("approval service down")
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{
		Logger: discard(), AfterCall: audit.after,
		BeforeCall: func(_ context.Context, c *bridge.Call) error {
			if strings.Contains(string(c.Args), "hook-fails") {
				return hookErr
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := set.Lookup("files")
	ctx := ctxT(t, 30*time.Second)
	tools := set.Tools()
	tests := []struct {
		name string
		call func() error
		kind bridge.Outcome
		// resultBytes > 0 expected
		result bool
	}{
		{"ok", func() error {
			_, err := byName(t, tools, "read_file").Handler(ctx, json.RawMessage(`{"path":"p"}`))
			return err
		}, bridge.OutcomeOK, true},
		{"tool error", func() error {
			_, err := byName(t, tools, "broken").Handler(ctx, nil)
			var te *results.ToolError
			if !errors.As(err, &te) {
				t.Errorf("err = %v, want a ToolError", err)
			}
			return nil
		}, bridge.OutcomeToolError, true},
		{"raw tool error", func() error {
			res, err := srv.CallTool(ctx, "broken", nil)
			if err != nil || !res.IsError {
				t.Errorf("CallTool = %+v, %v", res, err)
			}
			return nil
		}, bridge.OutcomeToolError, true},
		{"invalid arguments", func() error {
			_, err := byName(t, tools, "read_file").Handler(ctx, json.RawMessage(`[1]`))
			if !errors.Is(err, bridge.ErrInvalidArguments) {
				t.Errorf("err = %v", err)
			}
			return nil
		}, bridge.OutcomeInvalidArguments, false},
		{"hook error", func() error {
			_, err := byName(t, tools, "read_file").Handler(ctx, json.RawMessage(`{"path":"hook-fails"}`))
			if !errors.Is(err, hookErr) {
				t.Errorf("err = %v, want the hook's error", err)
			}
			return nil
		}, bridge.OutcomeHookError, false},
		{"unknown tool", func() error {
			_, err := srv.CallTool(ctx, "no_such_tool", nil)
			if err == nil {
				t.Error("calling an unknown tool succeeded")
			}
			return nil
		}, "-32602", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); err != nil {
				t.Fatal(err)
			}
			_, end := audit.last(t)
			if end.Outcome != tt.kind || (end.ResultBytes > 0) != tt.result {
				t.Errorf("AfterCall: kind %q, %d result bytes, err %v; want kind %q, result %v", end.Outcome, end.ResultBytes, end.Err, tt.kind, tt.result)
			}
			if tt.kind != bridge.OutcomeOK && tt.kind != bridge.OutcomeToolError && end.Err == nil {
				t.Error("AfterCall got no error for a failed call")
			}
		})
	}
}

func TestPerCallHeadersAndMeta(t *testing.T) {
	var hs hookServer
	set, err := connectSet(t, []bridge.ServerConfig{hs.http(t, "remote")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := byName(t, set.Tools(), "read_file")
	ctx := bridge.WithCallHeaders(ctxT(t, 30*time.Second), http.Header{"Authorization": {"Bearer alice-token"}, "X-Tenant": {"alice"}})
	ctx = bridge.WithCallMeta(ctx, map[string]any{"tenant": "alice", "requestId": "r-1"})
	ctx = bridge.WithCallMeta(ctx, map[string]any{"requestId": "r-2"})
	hs.mu.Lock()
	before := len(hs.headers)
	hs.mu.Unlock()
	if _, err := read.Handler(ctx, json.RawMessage(`{"path":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if m := hs.lastMeta(); m["tenant"] != "alice" || m["requestId"] != "r-2" {
		t.Errorf("the server got _meta %v, want tenant=alice requestId=r-2", m)
	}
	if _, err := read.Handler(ctxT(t, 30*time.Second), json.RawMessage(`{"path":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if m := hs.lastMeta(); m["tenant"] != nil {
		t.Errorf("the next call kept _meta %v", m)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	posts := hs.headers[before:]
	if len(posts) != 2 {
		t.Fatalf("%d POSTs for two calls", len(posts))
	}
	if a, tn := posts[0].Get("Authorization"), posts[0].Get("X-Tenant"); a != "Bearer alice-token" || tn != "alice" {
		t.Errorf("first call: Authorization %q, X-Tenant %q", a, tn)
	}
	if a, tn := posts[1].Get("Authorization"), posts[1].Get("X-Tenant"); a != "Bearer shared" || tn != "" {
		t.Errorf("second call: Authorization %q, X-Tenant %q; want the configured header only", a, tn)
	}
}

func TestToolsFilter(t *testing.T) {
	var hs hookServer
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		patterns []string
		want     string
	}{
		{nil, "broken,delete_file,read_file"},
		{[]string{"*_file"}, "delete_file,read_file"},
		{[]string{"!delete_*"}, "broken,read_file"},
		{[]string{"*_file", "!delete_*"}, "read_file"},
		{[]string{"b?oken", "read_[a-z]*"}, "broken,read_file"},
		// A malformed pattern fails closed: whatever it aimed at, no tool gets through.
		{[]string{"[bad"}, ""},
		{[]string{"*", "![bad"}, ""},
		{[]string{"!delete_[*"}, ""},
		{[]string{"read_*", "!delete_[*"}, ""},
		{[]string{`!delete_\`}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(names(set.Tools().Filter(tt.patterns...)), ","); got != tt.want {
			t.Errorf("Filter(%q) = %s, want %s", tt.patterns, got, tt.want)
		}
	}
	// Filtering changes what an agent gets, not what an App may call.
	_ = set.Tools().Filter("!delete_*")
	if _, err := set.Proxy(ctxT(t, 30*time.Second), apps.ProxyRequest{ServerID: "files", Method: "tools/call",
		Params: json.RawMessage(`{"name":"delete_file","arguments":{"path":"x"}}`)}); err != nil {
		t.Errorf("an App's call to a tool filtered out of an agent's list: %v", err)
	}
}

func TestBeforeCallPanicFailsTheCall(t *testing.T) {
	var hs hookServer
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{Logger: discard(),
		BeforeCall: func(context.Context, *bridge.Call) error { panic("approval UI crashed") }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = byName(t, set.Tools(), "read_file").Handler(ctxT(t, 30*time.Second), nil)
	if err == nil || !strings.Contains(err.Error(), "approval UI crashed") || hs.calls.Load() != 0 {
		t.Errorf("err = %v, server calls %d; want the panic as the error and no call", err, hs.calls.Load())
	}
}
