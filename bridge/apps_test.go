package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

// The proxy over HTTP, against real servers: one App server twice (same URL, so the hash is
// ambiguous) and one stdio server.
func TestProxyHandler(t *testing.T) {
	a := httpConfig(t, "ui", "apps", "http", nil)
	b := a
	b.ID = "ui-again"
	set, err := connectSet(t, []bridge.ServerConfig{a, b, stdioConfig(t, "local", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(set.ProxyHandler())
	t.Cleanup(srv.Close)
	hash := apps.ServerHash("http", a.URL)
	local, _ := set.Lookup("local")
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"app-only tool by ID", `{"serverId":"ui","method":"tools/call","params":{"name":"poll","arguments":{}}}`, 200, `polled`},
		{"resource by ID", `{"serverId":"ui-again","method":"resources/read","params":{"uri":"ui://time/app.html"}}`, 200, `time`},
		{"ping by stdio hash", `{"serverHash":"` + local.Hash() + `","method":"ping"}`, 200, `{}`},
		{"notification", `{"serverId":"ui","method":"notifications/message","params":{"level":"info","data":"hi"}}`, 200, `{}`},
		{"ambiguous hash", `{"serverHash":"` + hash + `","method":"ping"}`, 409, `ambiguous`},
		{"model-only tool refused", `{"serverId":"ui","method":"tools/call","params":{"name":"model-only"}}`, 403, `not visible to apps`},
		{"method refused", `{"serverId":"ui","method":"tools/list"}`, 403, `not allowed`},
		{"unknown server", `{"serverHash":"ffff","method":"ping"}`, 404, `unknown server`},
		{"bad json", `{"serverId":`, 400, `error`},
		{"missing server", `{"method":"ping"}`, 400, `missing`},
		{"tool error is a result", `{"serverId":"local","method":"tools/call","params":{"name":"fail"}}`, 200, `"isError":true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
				t.Errorf("POST %s = %d %s, want %d containing %q", tt.body, resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	if _, ok := set.Lookup(hash); ok {
		t.Error("Lookup by an ambiguous hash succeeded")
	}
	if s, ok := set.Lookup("ui-again"); !ok || s.ID() != "ui-again" {
		t.Error("Lookup by ID failed")
	}
}

// A server whose tools are all app-only gives the model nothing, but its App can still reach
// it through the set, and Close still closes it.
func TestAppOnlyServerStaysReachable(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "only-app", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("polled"), nil })
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	set, err := connectSet(t, []bridge.ServerConfig{stdioConfig(t, "local", "basic"), {ID: "hidden", URL: ts.URL}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := set.Lookup("hidden"); !ok || len(s.Tools()) != 0 || len(set.Servers()) != 2 {
		t.Errorf("the app-only server is not in the set's servers: %v %v", s, ok)
	}
	for _, tool := range set.Tools() {
		if tool.Server.ID() == "hidden" {
			t.Errorf("app-only tool %s given to the model", tool.Name)
		}
	}
	raw, err := set.Proxy(ctxT(t, 10*time.Second), apps.ProxyRequest{ServerID: "hidden", Method: "tools/call", Params: json.RawMessage(`{"name":"poll"}`)})
	if err != nil || !strings.Contains(string(raw), "polled") {
		t.Errorf("Proxy = %s, %v", raw, err)
	}
}

// A backend that renders MCP Apps: the model gets the flattened text; the frontend gets the
// activity (by server hash, never the URL) and reaches the server through the proxy handler.
func ExampleSet_ProxyHandler() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "clock", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "get-time",
		Description: "Shows a clock.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": "ui://clock/app.html"}},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "It is noon."}},
			StructuredContent: map[string]any{"time": "12:00"},
		}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "ui://clock/app.html", Name: "clock", MIMEType: apps.ResourceMIMEType},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://clock/app.html", MIMEType: apps.ResourceMIMEType, Text: "<p>clock</p>"}}}, nil
		})
	mcpServer := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer mcpServer.Close()

	activities := make(chan apps.Activity, 1)
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{{ID: "clock", URL: mcpServer.URL}}, &bridge.Options{
		Logger: slog.New(slog.DiscardHandler),
		OnAppResult: func(_ context.Context, a apps.Activity) {
			activities <- a // a real backend streams this to the frontend (e.g. an AG-UI ACTIVITY_SNAPSHOT)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	tools := set.Tools()

	mux := http.NewServeMux()
	mux.Handle("POST /mcp-proxy", set.ProxyHandler())
	backend := httptest.NewServer(mux)
	defer backend.Close()

	fmt.Println(tools[0].Description)
	out, _ := tools[0].Handler(context.Background(), nil)
	fmt.Println("model reads:", out)
	a := <-activities
	fmt.Println("frontend renders:", a.ResourceURI, "from server", a.ServerHash == tools[0].Server.Hash())

	// The frontend fetches the UI by server hash through the backend.
	body := `{"serverHash":"` + a.ServerHash + `","method":"resources/read","params":{"uri":"` + a.ResourceURI + `"}}`
	resp, err := http.Post(backend.URL+"/mcp-proxy", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var rr mcp.ReadResourceResult
	_ = json.NewDecoder(resp.Body).Decode(&rr)
	fmt.Println(resp.StatusCode, rr.Contents[0].Text)
	// Output:
	// Shows a clock.
	// [UI Resource: ui://clock/app.html]
	// model reads: It is noon.
	// frontend renders: ui://clock/app.html from server true
	// 200 <p>clock</p>
}

func TestUIResourceCache(t *testing.T) {
	var reads atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "ui", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "show", InputSchema: json.RawMessage(`{"type":"object"}`),
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://x/app.html"}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("shown"), nil })
	for _, uri := range []string{"ui://x/app.html", "file:///data.txt"} {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				n := reads.Add(1)
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: fmt.Sprint("read ", n)}}}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	for _, ttl := range []time.Duration{0, time.Hour} {
		reads.Store(0)
		opts := quiet()
		opts.UIResourceCacheTTL = ttl
		tools, err := connect(t, []bridge.ServerConfig{{ID: "ui", URL: ts.URL}}, opts)
		if err != nil {
			t.Fatal(err)
		}
		s := tools[0].Server
		ctx := ctxT(t, 10*time.Second)
		for range 3 {
			if _, err := s.ReadResource(ctx, "ui://x/app.html"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ReadResource(ctx, "file:///data.txt"); err != nil {
				t.Fatal(err)
			}
		}
		want := int64(6)
		if ttl > 0 {
			want = 4 // the ui:// resource once, the other every time
		}
		if got := reads.Load(); got != want {
			t.Errorf("TTL %s: server saw %d reads, want %d", ttl, got, want)
		}
	}
}
