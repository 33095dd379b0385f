package bridge_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// unknownContentResult is the raw fixture's "video" result: blocks of types this version
// does not know between text blocks (go-sdk's decoder refuses them).
const unknownContentResult = `{"content":[{"type":"text","text":"before"},{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"},{"type":"tool_result","toolUseId":"u","content":[{"type":"hologram","size":12}]},{"type":"text","text":"after"}]}`

// TestUnknownContentPlaceholder: a result with content blocks of unknown types does not
// fail the call, on every transport and both call paths: the model reads placeholders
// between the text blocks, and a host gets typed parts with the raw blocks. Over stdio the
// server is the raw fixture; over HTTP it is a go-sdk server (legacy SSE; Streamable HTTP
// on 2025-11-25 with a session, answering in an event stream or in JSON, which is go-sdk's
// path; on 2026-07-28 stateless, the direct path) whose tool answers text blocks that a
// handler in front of it turns into the unknown blocks on their way out.
func TestUnknownContentPlaceholder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      func(t *testing.T) (bridge.ServerConfig, *atomic.Int64)
		protocol string // "": not checked
		direct   bool
	}{
		{"stdio", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			return rawConfig(t, "v", "video", newProcLog(t)), nil
		}, "", true},
		{"sse", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return videoServer() }, nil)
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeSSE, URL: url}, n
		}, "", true},
		{"http 2025-11-25 stateful, event stream", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return videoServer() }, &mcp.StreamableHTTPOptions{Logger: discard()})
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeHTTP, URL: url}, n
		}, "2025-11-25", true},
		{"http 2025-11-25 stateful, JSON", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return videoServer() }, &mcp.StreamableHTTPOptions{Logger: discard(), JSONResponse: true})
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeHTTP, URL: url}, n
		}, "2025-11-25", true},
		{"http 2025-11-25 stateful with elicitation (go-sdk's path), event stream", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return videoServer() }, &mcp.StreamableHTTPOptions{Logger: discard()})
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeHTTP, URL: url}, n
		}, "2025-11-25", false},
		{"http 2025-11-25 stateful with elicitation (go-sdk's path), JSON", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return videoServer() }, &mcp.StreamableHTTPOptions{Logger: discard(), JSONResponse: true})
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeHTTP, URL: url}, n
		}, "2025-11-25", false},
		{"http 2026-07-28 stateless", func(t *testing.T) (bridge.ServerConfig, *atomic.Int64) {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return videoServer() }, &mcp.StreamableHTTPOptions{Logger: discard(), Stateless: true})
			url, n := unknownContentHTTP(t, h)
			return bridge.ServerConfig{ID: "v", Type: bridge.TypeHTTP, URL: url}, n
		}, "2026-07-28", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, swapped := tc.cfg(t)
			opts := quiet()
			if !tc.direct {
				opts = eliciting() // go-sdk's path
			}
			tools, err := connect(t, []bridge.ServerConfig{cfg}, opts)
			if err != nil {
				t.Fatal(err)
			}
			tool := byName(t, tools, "video")
			if st := tool.Server.Status(); tc.protocol != "" && st.ProtocolVersion != tc.protocol {
				t.Fatalf("protocol %q, want %q (%s)", st.ProtocolVersion, tc.protocol, st.Negotiation)
			}
			inv, err := tool.Invoke(ctxT(t, 30*time.Second), nil)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if swapped != nil && swapped.Load() == 0 {
				t.Fatal("the handler in front of the server sent no unknown block")
			}
			if want := "before\n[video: video/mp4, 6 B]\n[tool result]\n[hologram: 12 B]\nafter"; inv.Text != want {
				t.Errorf("text = %q, want %q", inv.Text, want)
			}
			var raws []string
			for _, p := range results.Parts(inv.Result) {
				if p.Kind == results.KindUnknown {
					raws = append(raws, p.Type+" "+string(p.Raw))
				}
			}
			want := []string{`video {"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"}`, `hologram {"type":"hologram","size":12}`}
			if len(raws) != len(want) || raws[0] != want[0] || raws[1] != want[1] {
				t.Errorf("unknown parts = %q, want %q", raws, want)
			}
			direct, sdk := tool.Server.CallPaths()
			if got := direct > 0 && sdk == 0; tc.name != "stdio" && got != tc.direct {
				t.Errorf("calls by path (direct, go-sdk) = %d, %d; want the direct path: %v", direct, sdk, tc.direct)
			}
		})
	}
}

// The text blocks videoServer's tool answers, and the unknown blocks they become on the
// wire (unknownContentHTTP): together, unknownContentResult's content.
var unknownContentSwaps = [][2]string{
	{`{"type":"text","text":"@video@"}`, `{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"}`},
	{`{"type":"text","text":"@tool_result@"}`, `{"type":"tool_result","toolUseId":"u","content":[{"type":"hologram","size":12}]}`},
}

// videoServer is a go-sdk server whose tool "video" answers text blocks, two of them
// markers that unknownContentHTTP turns into blocks of unknown types.
func videoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "video", Version: "1"}, &mcp.ServerOptions{Logger: discard()})
	srv.AddTool(&mcp.Tool{Name: "video", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "before"}, &mcp.TextContent{Text: "@video@"},
				&mcp.TextContent{Text: "@tool_result@"}, &mcp.TextContent{Text: "after"}}}, nil
		})
	return srv
}

// unknownContentHTTP serves h over HTTP, replacing the marker blocks of unknownContentSwaps
// in what it writes (go-sdk writes each SSE event and each JSON body in one Write), and
// returns its URL and a count of the replacements made.
func unknownContentHTTP(t *testing.T, h http.Handler) (string, *atomic.Int64) {
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&swapWriter{ResponseWriter: w, n: &n}, r)
	}))
	t.Cleanup(ts.Close)
	path := "/mcp"
	if _, ok := h.(*mcp.SSEHandler); ok {
		path = "/sse"
	}
	return ts.URL + path, &n
}

// swapWriter replaces the marker blocks in each Write.
type swapWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *swapWriter) WriteHeader(code int) {
	w.Header().Del("Content-Length") // the body changes length
	w.ResponseWriter.WriteHeader(code)
}

func (w *swapWriter) Write(b []byte) (int, error) {
	out := b
	for _, s := range unknownContentSwaps {
		if c := bytes.Count(out, []byte(s[0])); c > 0 {
			out = bytes.ReplaceAll(out, []byte(s[0]), []byte(s[1]))
			w.n.Add(int64(c))
		}
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w *swapWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
