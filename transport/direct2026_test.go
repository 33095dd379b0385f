package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// modernServer is a go-sdk server for the 2026-07-28 direct-call tests. Its tools record
// the _meta of each call they get; "confirm" asks for input on its first round
// (multi-round-trip) and counts its rounds; "progress" reports progress before answering.
type modernServer struct {
	srv *mcp.Server

	mu     sync.Mutex
	metas  []mcp.Meta
	rounds atomic.Int32 // rounds of "confirm" (first and retries)
	firsts atomic.Int32 // first rounds of "confirm" (no input responses)
}

func newModernServer() *modernServer {
	m := &modernServer{srv: mcp.NewServer(&mcp.Implementation{Name: "modern", Version: "1"}, nil)}
	m.srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"deep":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m.mu.Lock()
			m.metas = append(m.metas, req.Params.Meta)
			m.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	m.srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m.rounds.Add(1)
			if r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v state=%s", r.Action, r.Content, req.Params.RequestState)}}}, nil
			}
			m.firsts.Add(1)
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "sure?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"yes":{"type":"boolean"},"n":{"type":"integer","default":7}}}`)}},
				RequestState:  "s1",
			}, nil
		})
	m.srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	return m
}

func (m *modernServer) takeMetas() []mcp.Meta {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.metas
	m.metas = nil
	return out
}

// headerLog records the MCP headers of the tools/call POSTs an HTTP handler gets.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			l.mu.Lock()
			l.seen = append(l.seen, r.Header.Clone())
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) take() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seen
	l.seen = nil
	return out
}

// TestDirectCallsModern: on protocol 2026-07-28 a direct call over stdio, in-process and
// stateless Streamable HTTP carries the envelope go-sdk sends (the server sees the same
// _meta), gives the result and errors go-sdk gives, and a multi-round-trip result
// continues through go-sdk's loop with the tool's first round run once. Over HTTP the
// SEP-2243 headers are set (the go-sdk server checks them) and progress on the call's
// stream reaches OnProgress.
func TestDirectCallsModern(t *testing.T) {
	for _, kind := range []string{"inprocess", "stdio", "http"} {
		t.Run(kind, func(t *testing.T) {
			ms := newModernServer()
			var hdrs headerLog
			var spec transport.Spec
			k := transport.Kind(kind)
			switch kind {
			case "inprocess":
				k = transport.KindInProcess
				spec = transport.Spec{ID: "m", InProcess: func() (mcp.Transport, error) {
					st, ct := mcp.NewInMemoryTransports()
					if _, err := ms.srv.Connect(context.Background(), st, nil); err != nil {
						return nil, err
					}
					return ct, nil
				}}
			case "stdio":
				k, spec = transport.KindStdio, stdioSpec(t, "m", "server")
			case "http":
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms.srv }, &mcp.StreamableHTTPOptions{Stateless: true})
				ts := httptest.NewServer(hdrs.wrap(h))
				t.Cleanup(ts.Close)
				k, spec = transport.KindHTTP, transport.Spec{ID: "m", URL: ts.URL + "/mcp"}
			}
			c, err := transport.Open(spec, k)
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			var elicited atomic.Int32
			client := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicited.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"yes": true}}, nil
				},
			})
			cs, err := client.Connect(ctx, c.Transport(), nil)
			if err != nil {
				c.Close()
				t.Fatalf("connect: %v (stderr: %q)", err, c.Stderr())
			}
			t.Cleanup(func() { cs.Close(); c.Close() })
			v := cs.InitializeResult().ProtocolVersion
			if v != wire.ModernProtocol {
				t.Fatalf("negotiated %q", v)
			}
			if !c.Direct().DirectCalls(v) {
				t.Fatal("DirectCalls = false on " + v)
			}
			opts := &wire.CallOptions{Protocol: v}

			// Results and errors as go-sdk's; the same _meta on the server.
			tool := "echo"
			args := json.RawMessage(`{"region":"us-west1","n":42,"deep":{"flag":true},"x":"<é>"}`)
			if kind == "stdio" {
				tool, args = "t0", json.RawMessage(`{"zeta":2}`)
			}
			if kind != "stdio" {
				_, _ = cs.ListTools(ctx, nil)
			}
			for _, name := range []string{tool, "nosuchtool"} {
				got, gerr := c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, &wire.CallOptions{Protocol: v, InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"deep":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}`)})
				want, werr := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Errorf("%s: direct error %v, go-sdk error %v", name, gerr, werr)
				}
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Errorf("%s: direct %s, go-sdk %s", name, g, w)
				}
			}
			if kind != "stdio" {
				metas := ms.takeMetas()
				if len(metas) != 2 || !reflect.DeepEqual(metas[0], metas[1]) {
					t.Errorf("_meta seen by the server: direct vs go-sdk %v", metas)
				} else if metas[0][mcp.MetaKeyProtocolVersion] != v || metas[0]["io.modelcontextprotocol/clientCapabilities"] == nil || metas[0]["io.modelcontextprotocol/clientInfo"] == nil {
					t.Errorf("envelope incomplete: %v", metas[0])
				}
			}
			if kind == "http" {
				seen := hdrs.take()
				if len(seen) < 1 {
					t.Fatal("no tools/call POST seen")
				}
				h := seen[0]
				for k, want := range map[string]string{
					"Mcp-Protocol-Version": v, "Mcp-Method": "tools/call", "Mcp-Name": "echo",
					"Mcp-Param-Region": "us-west1", "Mcp-Param-N": "42", "Mcp-Param-Flag": "true",
				} {
					if got := h.Get(k); got != want {
						t.Errorf("direct POST header %s = %q, want %q", k, got, want)
					}
				}
			}
			if kind == "stdio" {
				return
			}

			// A multi-round-trip call: the first round once, then go-sdk's loop.
			p := &mcp.CallToolParams{Name: "confirm", Arguments: json.RawMessage(`{}`)}
			_, err = c.Direct().CallTool(ctx, p, opts)
			var ir *wire.InputRequiredError
			if !errors.As(err, &ir) {
				t.Fatalf("confirm: %v, want an InputRequiredError", err)
			}
			res, err := cs.CallTool(ir.Continue(ctx), p)
			if err != nil {
				t.Fatalf("confirm continued: %v", err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != "accept map[n:7 yes:true] state=s1" {
				t.Errorf("confirm = %q", text)
			}
			if f, r, e := ms.firsts.Load(), ms.rounds.Load(), elicited.Load(); f != 1 || r != 2 || e != 1 {
				t.Errorf("first rounds %d, rounds %d, elicitations %d; want 1, 2, 1", f, r, e)
			}

			// Progress on the call's own stream (HTTP) or through go-sdk's session.
			var got atomic.Value
			popts := &wire.CallOptions{Protocol: v, OnProgress: func(p *mcp.ProgressNotificationParams) { got.Store(p.Message) }}
			pp := &mcp.CallToolParams{Name: "progress", Arguments: json.RawMessage(`{}`)}
			pp.SetProgressToken("tok-1")
			if _, err := c.Direct().CallTool(ctx, pp, popts); err != nil {
				t.Fatalf("progress: %v", err)
			}
			if kind == "http" && got.Load() != "half" {
				t.Errorf("OnProgress got %v", got.Load())
			}
		})
	}
}
