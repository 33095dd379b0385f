package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// The differential test: the same tools/call, on a fresh connection to the same go-sdk
// server, through the direct client (wire.Client, as the bridge drives it: an
// input_required result continued in go-sdk's loop with InputRequiredError.Continue) and
// through go-sdk's mcp.ClientSession.CallTool, must give the same result, or an error of
// the same class with the same text. Each call gets its own connection and server, so a
// case that ends the session (an oversized answer, the server's exit) cannot leak into
// the next. The stdio server is this test binary re-executed (TestMain); the Streamable
// HTTP server is go-sdk's handler under httptest, stateless, as a 2026-07-28 server is.

// diffServerEnv makes the test binary act as the stdio server of the differential test.
const diffServerEnv = "MCPBRIDGE_WIRE_DIFF_SERVER"

// diffLimit is the per-message limit of the differential test's connections
// (transport.Spec.MaxFrameBytes); the "big" tool answers with more.
const diffLimit = 16 << 10

// TestMain runs the tests or, under diffServerEnv, the stdio server.
func TestMain(m *testing.M) {
	if os.Getenv(diffServerEnv) != "" {
		time.AfterFunc(2*time.Minute, func() { os.Exit(9) }) // no child outlives a broken test
		if err := diffServer(func() { os.Exit(3) }).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// diffServer is the go-sdk server both paths call. Its tools: "ok" answers text,
// structured content and _meta; "fail" answers a tool error (isError); "confirm" asks for
// input on its first round (multi-round-trip) and answers with what it got; "big"
// answers more than diffLimit; "exit" runs exit mid-call (the stdio server's process
// exits). An unknown tool is go-sdk's JSON-RPC error.
func diffServer(exit func()) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "diff", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "ok", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{
			Meta:              mcp.Meta{"k": "v"},
			Content:           []mcp.Content{&mcp.TextContent{Text: "ok " + string(req.Params.Arguments)}, &mcp.TextContent{Text: "é<\u2028>"}},
			StructuredContent: map[string]any{"n": 1},
		}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "confirm", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v state=%s", r.Action, r.Content, req.Params.RequestState)}}}, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "sure?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"yes":{"type":"boolean"},"n":{"type":"integer","default":7}}}`)}},
			RequestState:  "s1",
		}, nil
	})
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 4*diffLimit)}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "exit", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		exit()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return s
}

// diffCase is one row of the differential table.
type diffCase struct {
	name string
	tool string
	// want is the class both paths must give, by kind (see errClass): the test checks the
	// expectation as well as the agreement, so that two paths failing alike for an
	// unrelated reason cannot pass.
	want map[string]string
	// rawDiffers, when set for a kind and version, says why the call's own error cannot
	// be the same on the two paths there; Conn.Overrun, the error the connection
	// records, must still be the same, and each path's error must be what the reason says.
	rawDiffers func(kind, version string) (why string, direct, sdk outcome)
}

// noDirect is the reason the direct path does not exist for Streamable HTTP before
// 2026-07-28: only from 2026-07-28 on is a call one self-contained POST, so before it the
// direct client declines (DirectCalls false, CallTool ErrNoDirectCall) and the bridge calls
// through go-sdk. Those rows check that it declines.
const noDirect = "no direct path: before 2026-07-28 a Streamable HTTP call belongs to go-sdk's session, not to a POST of its own (DirectCalls false, CallTool ErrNoDirectCall)"

func both(class string) map[string]string { return map[string]string{"stdio": class, "http": class} }

var diffCases = []diffCase{
	{name: "success", tool: "ok", want: both("none")},
	{name: "tool error", tool: "fail", want: both("none")},
	{name: "JSON-RPC error", tool: "nosuchtool", want: both("jsonrpc -32602")},
	// On 2025-11-25 too go-sdk's server sends the input requests and its client runs its
	// multi-round-trip loop: the direct path hands over to the same loop (Continue).
	{name: "input_required", tool: "confirm", want: both("none")},
	{name: "oversized answer", tool: "big", want: both("message too large"), rawDiffers: func(kind, version string) (string, outcome, outcome) {
		if kind != "http" {
			return "", outcome{}, outcome{}
		}
		over := "the server sent an SSE event of more than 16384 bytes, the per-message limit"
		return "over Streamable HTTP go-sdk's SSE reader fails the call with its own text (not wrapping " +
				"ErrMessageTooLarge) while the direct client's reader reports the connection's budget error; " +
				"both record the same Conn.Overrun, which is what the bridge reports (overrunErr)",
			outcome{class: "message too large", text: `calling "tools/call": sending "tools/call": ` + over, overrun: over},
			outcome{class: "other", text: `calling "tools/call": sending "tools/call": malformed event: SSE event exceeded 16384 bytes without terminating`, overrun: over}
	}},
	// The stdio server's process exits: the session ends with the process's end
	// (exit status, stderr, then EOF). The HTTP server drops the connection: go-sdk's
	// "rejected by transport".
	{name: "server exit mid-call", tool: "exit", want: map[string]string{"stdio": "EOF", "http": "jsonrpc -32005"}},
}

// TestDirectMatchesGoSDK is the differential test: every case, for stdio and Streamable
// HTTP, on 2026-07-28 (negotiated) and 2025-11-25 (pinned).
func TestDirectMatchesGoSDK(t *testing.T) {
	for _, kind := range []string{"stdio", "http"} {
		for _, version := range []string{wire.ModernProtocol, "2025-11-25"} {
			for _, tc := range diffCases {
				t.Run(kind+"/"+version+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					if kind == "http" && version != wire.ModernProtocol {
						checkNoDirect(t, kind, version)
						t.Log(noDirect)
						return
					}
					direct := diffCall(t, kind, version, tc.tool, true)
					sdk := diffCall(t, kind, version, tc.tool, false)
					t.Logf("direct: %+v", direct)
					if tc.rawDiffers != nil {
						if why, wantDirect, wantSDK := tc.rawDiffers(kind, version); why != "" {
							t.Log("raw errors differ: " + why)
							if direct != wantDirect || sdk != wantSDK {
								t.Errorf("outcomes:\ndirect: %+v, want %+v\ngo-sdk: %+v, want %+v", direct, wantDirect, sdk, wantSDK)
							}
							return
						}
					}
					if direct != sdk {
						t.Errorf("the paths differ:\ndirect: %+v\ngo-sdk: %+v", direct, sdk)
					}
					if want := tc.want[kind]; sdk.class != want {
						t.Errorf("go-sdk's outcome is %q (%s), want %q", sdk.class, sdk.text, want)
					}
				})
			}
		}
	}
}

// outcome is what one call gave: the result as JSON, or the error's class and text; and
// the error the connection recorded (Conn.Overrun), if any.
type outcome struct {
	result  string
	class   string
	text    string
	overrun string
}

// diffConn opens a connection of kind to a fresh diffServer and a go-sdk session on it
// with protocol version.
func diffConn(t *testing.T, ctx context.Context, kind, version string) (*transport.Conn, *mcp.ClientSession) {
	t.Helper()
	var spec transport.Spec
	k := transport.KindStdio
	switch kind {
	case "stdio":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		spec = transport.Spec{ID: "diff", Command: exe, Env: map[string]string{diffServerEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
	case "http":
		srv := diffServer(func() {})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
		ts := httptest.NewServer(dropOnExit(h))
		t.Cleanup(ts.Close)
		k, spec = transport.KindHTTP, transport.Spec{ID: "diff", URL: ts.URL + "/mcp"}
	}
	spec.MaxFrameBytes = diffLimit
	c, err := transport.Open(spec, k)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "diff-test", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"yes": true}}, nil
		},
	})
	var opts *mcp.ClientSessionOptions
	if version != wire.ModernProtocol {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, c.Transport(), opts)
	if err != nil {
		c.Close()
		t.Fatalf("connect: %v (stderr: %q)", err, c.Stderr())
	}
	t.Cleanup(func() { cs.Close(); c.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("negotiated %q, want %q", v, version)
	}
	return c, cs
}

// dropOnExit stands for the HTTP server's process exiting during a call of "exit": the
// connection is dropped without an answer.
func dropOnExit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"name":"exit"`)) {
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					_ = conn.Close()
				}
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// diffCall makes one call of tool on a fresh connection, through the direct client or
// through go-sdk's session.
func diffCall(t *testing.T, kind, version, tool string, direct bool) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, cs := diffConn(t, ctx, kind, version)
	p := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(`{"a":1}`)}
	var res *mcp.CallToolResult
	var err error
	if direct {
		if !c.Direct().DirectCalls(version) {
			t.Fatalf("DirectCalls(%q) = false", version)
		}
		res, err = c.Direct().CallTool(ctx, p, &wire.CallOptions{Protocol: version})
		var ir *wire.InputRequiredError
		if errors.As(err, &ir) {
			res, err = cs.CallTool(ir.Continue(ctx), p) // the hand-off the bridge makes
		}
	} else {
		res, err = cs.CallTool(ctx, p)
	}
	var out outcome
	if over := c.Overrun(); over != nil {
		out.overrun = over.Error()
	}
	if err != nil {
		out.class, out.text = errClass(err), normalize(err.Error())
		return out
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		t.Fatal(merr)
	}
	out.result, out.class = string(b), "none"
	return out
}

// errClass names the kind of error err is, as a caller tells them apart.
func errClass(err error) string {
	var je *jsonrpc.Error
	var ir *wire.InputRequiredError
	switch {
	case errors.As(err, &ir):
		return "input_required"
	case errors.Is(err, transport.ErrFrameTooLarge), errors.Is(err, transport.ErrMessageTooLarge):
		return "message too large"
	case errors.As(err, &je):
		return fmt.Sprintf("jsonrpc %d", je.Code)
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "connection closed"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "context"
	case errors.Is(err, io.EOF):
		return "EOF"
	}
	return "other"
}

// What differs from one server to the next and nothing else: the run time a stdio
// server's end reports, and the port of an HTTP server (each call has its own).
var (
	elapsed = regexp.MustCompile(`after [0-9][0-9.]*(ns|µs|ms|s|m[0-9.]*s|h[0-9.m]*s)`)
	port    = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
)

func normalize(s string) string {
	return port.ReplaceAllString(elapsed.ReplaceAllString(s, "after <time>"), "127.0.0.1:<port>")
}

// checkNoDirect checks a case the direct client declines: DirectCalls is false and
// CallTool returns ErrNoDirectCall.
func checkNoDirect(t *testing.T, kind, version string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := diffConn(t, ctx, kind, version)
	if c.Direct().DirectCalls(version) {
		t.Errorf("DirectCalls(%q) = true over %s", version, kind)
	}
	if _, err := c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: "ok"}, &wire.CallOptions{Protocol: version}); !errors.Is(err, wire.ErrNoDirectCall) {
		t.Errorf("CallTool: %v, want ErrNoDirectCall", err)
	}
}
