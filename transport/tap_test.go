package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// rawRecorder keeps the raw params of the tools/call requests a server received.
type rawRecorder struct {
	mu     sync.Mutex
	params []string
	names  []string // Mcp-Name headers of tasks/* requests (HTTP)
}

func (r *rawRecorder) add(body []byte, h http.Header) {
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case req.Method == "tools/call":
		r.params = append(r.params, string(req.Params))
	case strings.HasPrefix(req.Method, "tasks/") && h != nil:
		r.names = append(r.names, h.Get("Mcp-Name"))
	}
}

func (r *rawRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.params) == 0 {
		return ""
	}
	return r.params[len(r.params)-1]
}

type recConn struct {
	mcp.Connection
	rec *rawRecorder
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok {
		b, _ := jsonrpc.EncodeMessage(req)
		c.rec.add(b, nil)
	}
	return m, err
}

// A Tap adds a member to the params of the requests it follows and keeps their raw result,
// on every transport; requests of other methods and contexts are untouched.
func TestTap(t *testing.T) {
	for _, tc := range []struct {
		name         string
		kind         transport.Kind
		jsonResponse bool
	}{
		{"inprocess", transport.KindInProcess, false},
		{"stdio", transport.KindStdio, false},
		{"streamable sse responses", transport.KindHTTP, false},
		{"streamable json responses", transport.KindHTTP, true},
		{"legacy sse", transport.KindSSE, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			rec := &rawRecorder{}
			var spec transport.Spec
			switch tc.kind {
			case transport.KindStdio:
				spec = stdioSpec(t, "tap", "server")
			case transport.KindInProcess:
				srv := newServer()
				spec = transport.Spec{ID: "tap", InProcess: func() (mcp.Transport, error) {
					st, ct := mcp.NewInMemoryTransports()
					sc, err := st.Connect(context.Background())
					if err != nil {
						return nil, err
					}
					if _, err := srv.Connect(context.Background(), connTransport{&recConn{sc, rec}}, nil); err != nil {
						return nil, err
					}
					return ct, nil
				}}
			default:
				srv := newServer()
				get := func(*http.Request) *mcp.Server { return srv }
				var h http.Handler = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: tc.jsonResponse})
				if tc.kind == transport.KindSSE {
					h = mcp.NewSSEHandler(get, nil)
				}
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						b, _ := io.ReadAll(r.Body)
						r.Body = io.NopCloser(bytes.NewReader(b))
						rec.add(b, r.Header)
					}
					h.ServeHTTP(w, r)
				}))
				t.Cleanup(ts.Close)
				spec = transport.Spec{ID: "tap", URL: ts.URL + "/mcp"}
			}
			c, err := transport.Open(spec, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			initTap := &wire.Tap{Method: "initialize"}
			client := mcp.NewClient(&mcp.Implementation{Name: "tap-test", Version: "1"}, nil)
			cs, err := client.Connect(wire.WithTap(ctx, initTap), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				c.Close()
				t.Fatalf("connect: %v", err)
			}
			t.Cleanup(func() { cs.Close(); c.Close() })
			if r := initTap.Result(); !bytes.Contains(r, []byte(`"protocolVersion"`)) || !bytes.Contains(r, []byte(`"transport-test"`)) {
				t.Errorf("initialize tap kept %s, want the raw initialize result", r)
			}

			tap := &wire.Tap{Method: "tools/call", Param: "task", Value: json.RawMessage(`{"ttl":5000}`)}
			args := json.RawMessage(`{"zeta":2,"html":"<&>"}`)
			res, err := cs.CallTool(wire.WithTap(ctx, tap), &mcp.CallToolParams{Name: "t0", Arguments: args})
			if err != nil || len(res.Content) != 1 {
				t.Fatalf("tapped call = %v, %v", res, err)
			}
			if got := string(tap.Result()); !strings.Contains(got, `"text":"ok"`) {
				t.Errorf("tap kept %q, want the call's raw result", got)
			}
			if tc.kind != transport.KindStdio { // the stdio server is another process: not observed
				p := rec.last()
				if !strings.Contains(p, `"task":{"ttl":5000}`) || !strings.Contains(p, `"arguments":{"zeta":2,"html":"<&>"}`) {
					t.Errorf("the server got params %s, want the task member added and the arguments as sent", p)
				}
			}
			// Another call without the tap is left alone, and Keep filters what is kept.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if p := rec.last(); tc.kind != transport.KindStdio && strings.Contains(p, `"task"`) {
				t.Errorf("an untapped call got params %s", p)
			}
			keepNone := &wire.Tap{Method: "tools/call", Keep: func(json.RawMessage) bool { return false }}
			if _, err := cs.CallTool(wire.WithTap(ctx, keepNone), &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if r := keepNone.Result(); r != nil {
				t.Errorf("a tap whose Keep refuses kept %s", r)
			}
		})
	}
}

// connTransport hands out one already connected Connection.
type connTransport struct{ c mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }
