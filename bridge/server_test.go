package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// The test binary doubles as a stdio MCP server: with serverEnv set, TestMain runs the
// named fixture over stdin/stdout instead of the tests.
const serverEnv = "MCPBRIDGE_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(rawEnv); mode != "" {
		os.Exit(runRawServer(mode))
	}
	if name := os.Getenv(serverEnv); name != "" {
		os.Exit(runStdioServer(name))
	}
	os.Exit(m.Run())
}

func runStdioServer(name string) int {
	if name == "tasks-ext" || name == "tasks-2025" {
		return runStdioTaskServer(name == "tasks-ext")
	}
	srv := newFixture(name, nil)
	if srv == nil {
		fmt.Fprintf(os.Stderr, "unknown fixture %q\n", name)
		return 2
	}
	fmt.Fprintf(os.Stderr, "fixture %s starting (pid %d) with %q\n", name, os.Getpid(), os.Args[1:])
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		return 1
	}
	return 0
}

// Schemas with keys in an unusual order, $defs, additionalProperties, x- keys and a big int:
// Parameters must carry these exact bytes.
const (
	echoSchema  = `{"type":"object","x-order":["z","a"],"$defs":{"Msg":{"type":"string","minLength":1}},"properties":{"z":{"$ref":"#/$defs/Msg"},"a":{"type":"integer","maximum":9007199254740993,"x-custom":{"b":1,"a":[3,2,1]}}},"required":["z"],"additionalProperties":false}`
	addSchema   = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`
	emptySchema = `{"type":"object"}`
)

// counters lets in-process tests see how often a fixture tool ran.
type counters struct{ calls atomic.Int64 }

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newFixture builds a real go-sdk server by name.
func newFixture(name string, c *counters) *mcp.Server {
	if c == nil {
		c = &counters{}
	}
	opts := &mcp.ServerOptions{}
	if name == "paged" {
		opts.PageSize = 3
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture-" + name, Version: "1.2.3"}, opts)
	add := func(t *mcp.Tool, h mcp.ToolHandler) {
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c.calls.Add(1)
			return h(ctx, req)
		})
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	switch name {
	case "basic":
		add(&mcp.Tool{Name: "echo", Description: "Echoes z.", InputSchema: json.RawMessage(echoSchema)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("echo: " + fmt.Sprint(args(req)["z"])), nil
			})
		add(&mcp.Tool{Name: "add", Description: "Adds.", InputSchema: json.RawMessage(addSchema),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				m := args(req)
				a, _ := m["a"].(float64)
				b, _ := m["b"].(float64)
				return text(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
			})
		add(&mcp.Tool{Name: "weather", Description: "Structured.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{
					StructuredContent: map[string]any{"temp": 21, "sky": "<clear> & calm"},
					Content: []mcp.Content{
						&mcp.TextContent{Text: `{"sky":"<clear> & calm","temp":21}`},
						&mcp.TextContent{Text: "Nice day."},
					},
				}, nil
			})
		add(&mcp.Tool{Name: "picture", Description: "Image only.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: make([]byte, 2048), MIMEType: "image/png"}}}, nil
			})
		add(&mcp.Tool{Name: "doc", Description: "Embedded resource.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}}}}, nil
			})
		add(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}, nil
			})
		add(&mcp.Tool{Name: "pid", Description: "Process ID.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(strconv.Itoa(os.Getpid())), nil
			})
		add(&mcp.Tool{Name: "sleep", Description: "Sleeps until cancelled or ms elapsed.", InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}}}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ms, _ := args(req)["ms"].(float64)
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return text("slept"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
		add(&mcp.Tool{Name: "exit", Description: "Exits the server process.", InputSchema: json.RawMessage(emptySchema)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				os.Exit(3)
				return nil, nil
			})
	case "clash":
		for _, n := range []string{"echo", "my.tool", "a b", "9lives", "add"} {
			add(&mcp.Tool{Name: n, Description: "Clash " + n, InputSchema: json.RawMessage(emptySchema)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("clash " + n), nil
				})
		}
	case "apps":
		add(&mcp.Tool{Name: "get-time", Description: "Time.", InputSchema: json.RawMessage(emptySchema),
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://time/app.html"}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"time": "noon"}, Content: []mcp.Content{&mcp.TextContent{Text: "It is noon."}}}, nil
			})
		add(&mcp.Tool{Name: "legacy-app", Description: "Flat key.", InputSchema: json.RawMessage(emptySchema),
			Meta: mcp.Meta{"ui/resourceUri": "ui://legacy/app.html"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("legacy"), nil })
		add(&mcp.Tool{Name: "poll", Description: "App only.", InputSchema: json.RawMessage(emptySchema),
			Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("polled"), nil })
		add(&mcp.Tool{Name: "model-only", Description: "Model only.", InputSchema: json.RawMessage(emptySchema),
			Meta: mcp.Meta{"ui": map[string]any{"resourceUri": 42, "visibility": []any{"model"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("model"), nil })
		srv.AddResource(&mcp.Resource{URI: "ui://time/app.html", Name: "time", MIMEType: "text/html;profile=mcp-app"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://time/app.html", MIMEType: "text/html;profile=mcp-app", Text: "<html>time</html>"}}}, nil
			})
	case "progress":
		add(&mcp.Tool{Name: "steps", Description: "Reports progress.", InputSchema: json.RawMessage(emptySchema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				tok := req.Params.GetProgressToken()
				if tok == nil {
					return text("no token"), nil
				}
				for i := 1; i <= 3; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)}); err != nil {
						return nil, err
					}
				}
				return text("done"), nil
			})
	case "paged":
		for i := range 10 {
			n := fmt.Sprintf("t%02d", i)
			add(&mcp.Tool{Name: n, Description: n, InputSchema: json.RawMessage(emptySchema)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(n), nil })
		}
	default:
		return nil
	}
	return srv
}

// stdioConfig runs fixture name as a child process (this test binary).
func stdioConfig(t testing.TB, id, name string) bridge.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bridge.ServerConfig{ID: id, Command: exe, Env: map[string]string{serverEnv: name}}
}

// httpConfig serves fixture name over Streamable HTTP (typ "http") or legacy SSE ("sse").
func httpConfig(t testing.TB, id, name, typ string, c *counters) bridge.ServerConfig {
	t.Helper()
	srv := newFixture(name, c)
	var h http.Handler
	path := "/mcp"
	if typ == "sse" {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		path = "/sse"
	} else {
		h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return bridge.ServerConfig{ID: id, Type: typ, URL: ts.URL + path}
}

func quiet() *bridge.Options {
	return &bridge.Options{Logger: discard()}
}

// inProcessConfig serves fixture name in this process over in-memory transports; every
// (re)dial gets a fresh pair.
func inProcessConfig(t testing.TB, id, name string, c *counters) bridge.ServerConfig {
	t.Helper()
	srv := newFixture(name, c)
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// headerTagger is a host's own RoundTripper (tracing, proxy, ...): it tags every request.
type headerTagger struct{ base http.RoundTripper }

func (h headerTagger) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Host-Transport", "yes")
	return h.base.RoundTrip(r)
}

// Options.HTTPClient carries requests through the host's transport, with configured headers
// and raw schema capture still applied on top.
func TestHostHTTPClient(t *testing.T) {
	srv := newFixture("basic", nil)
	var mu sync.Mutex
	var seen []http.Header
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	opts := quiet()
	opts.HTTPClient = &http.Client{Transport: headerTagger{http.DefaultTransport}}
	tools, err := connect(t, []bridge.ServerConfig{{ID: "h", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer cfg"}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(byName(t, tools, "echo").Parameters); !strings.Contains(got, `"properties"`) {
		t.Errorf("Parameters = %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no request reached the server")
	}
	for i, hd := range seen {
		if hd.Get("X-Host-Transport") != "yes" || hd.Get("Authorization") != "Bearer cfg" {
			t.Errorf("request %d: host transport %q, Authorization %q", i, hd.Get("X-Host-Transport"), hd.Get("Authorization"))
		}
	}
	if opts.HTTPClient.Transport.(headerTagger).base != http.DefaultTransport {
		t.Error("the host's client was modified")
	}
}
