//lint:file-ignore SA1019 the server's requests of 2025-11-25 (roots, sampling) are what the differential test sends on a call's stream

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
	"sync"
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
// HTTP server is go-sdk's handler under httptest, stateless, as a 2026-07-28 server is, and
// on 2025-11-25 stateful (event streams or JSON) or stateless (diffKinds).

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
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 2 {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2, Message: fmt.Sprint("step ", i+1)}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	// ping, roots and sample send the server's request on the call's own stream and answer
	// with what the client replied.
	s.AddTool(&mcp.Tool{Name: "ping", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return replied(nil, req.Session.Ping(ctx, nil))
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return replied(req.Session.ListRoots(ctx, nil))
	})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return replied(req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}))
	})
	s.AddTool(&mcp.Tool{Name: "exit", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		exit()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return s
}

// replied is a tool's result telling what the client answered the server's request with.
func replied(res any, err error) (*mcp.CallToolResult, error) {
	b, _ := json.Marshal(res)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("result %s error %v", b, err)}}}, nil
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

// Streamable HTTP kinds of the differential test on 2025-11-25, each its own server: "http"
// is go-sdk's stateful handler answering with event streams, "http-json" the same answering
// with JSON bodies, "http-nosession" go-sdk's stateless handler (no session ID). On
// 2026-07-28 "http" is the stateless handler. On 2025-11-25 the client declares no
// elicitation (a session that declares roots, sampling or elicitation stays on go-sdk's
// path: TestStatefulDirectDeclines).
var (
	diffKinds     = []string{"stdio", "http", "http-json", "http-nosession"}
	legacyOnly    = map[string]bool{"http-json": true, "http-nosession": true}
	statefulKinds = map[string]bool{"http": true, "http-json": true}
)

func both(class string) map[string]string { return map[string]string{"stdio": class, "http": class} }

// wantFor is tc's expected class for kind on version: by "kind/version", then by kind,
// then (for the HTTP kinds) by "http".
func (tc diffCase) wantFor(kind, version string) string {
	for _, k := range []string{kind + "/" + version, kind} {
		if w, ok := tc.want[k]; ok {
			return w
		}
	}
	return tc.want["http"]
}

// onStream is the class of a call whose server sends a request on the call's stream, which
// the scripted server (askOnStream) does only on 2025-11-25 HTTP: elsewhere the tool does
// not exist.
var onStream = map[string]string{"stdio": "jsonrpc -32602", "http/" + wire.ModernProtocol: "jsonrpc -32602", "http": "none"}

var diffCases = []diffCase{
	{name: "success", tool: "ok", want: both("none")},
	{name: "tool error", tool: "fail", want: both("none")},
	{name: "JSON-RPC error", tool: "nosuchtool", want: both("jsonrpc -32602")},
	// On 2025-11-25 too go-sdk's server sends the input requests and its client runs its
	// multi-round-trip loop: the direct path hands over to the same loop (Continue). The
	// 2025-11-25 HTTP sessions declare no elicitation, so go-sdk's loop fails it alike.
	{name: "input_required", tool: "confirm", want: map[string]string{"stdio": "none", "http/" + wire.ModernProtocol: "none", "http": "jsonrpc 0"}},
	{name: "oversized answer", tool: "big", want: both("message too large"), rawDiffers: func(kind, version string) (string, outcome, outcome) {
		switch kind {
		case "stdio":
			return "", outcome{}, outcome{}
		case "http-json":
			over := "the server sent an HTTP response body of more than 16384 bytes, the per-message limit"
			text := `calling "tools/call": sending "tools/call": failed to read body: ` + over
			return "go-sdk formats the body's read error into its own (%v) while the direct client wraps it " +
					"(ErrMessageTooLarge): the same text and the same Conn.Overrun, which is what the bridge reports",
				outcome{class: "message too large", text: text, overrun: over},
				outcome{class: "other", text: text, overrun: over}
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
	// Progress on the call's stream reaches the progress handler (a JSON answer has none).
	{name: "progress", tool: "progress", want: both("none")},
	// The server's requests on the call's stream get go-sdk's answers without handlers.
	{name: "ping on the stream", tool: "ping", want: both("none")},
	{name: "roots/list on the stream", tool: "roots", want: both("none")},
	{name: "sampling on the stream", tool: "sample", want: both("none")},
	{name: "elicitation on the stream", tool: askTool + "elicitation/create", want: onStream},
	{name: "unknown request on the stream", tool: askTool + "x/custom", want: onStream},
	// The server forgot the session (forgetOnGone): go-sdk's ErrSessionMissing, on which
	// the pool reconnects. Without a session the tool does not exist.
	{name: "session expired", tool: "gone", want: map[string]string{"stdio": "jsonrpc -32602", "http": "session missing", "http/" + wire.ModernProtocol: "jsonrpc -32602", "http-nosession": "jsonrpc -32602"}},
}

// TestDirectMatchesGoSDK is the differential test: every case, for stdio and Streamable
// HTTP, on 2026-07-28 (negotiated) and 2025-11-25 (pinned).
func TestDirectMatchesGoSDK(t *testing.T) {
	for _, kind := range diffKinds {
		for _, version := range []string{wire.ModernProtocol, "2025-11-25"} {
			if legacyOnly[kind] && version == wire.ModernProtocol {
				continue
			}
			for _, tc := range diffCases {
				t.Run(kind+"/"+version+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
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
					if want := tc.wantFor(kind, version); sdk.class != want {
						t.Errorf("go-sdk's outcome is %q (%s), want %q", sdk.class, sdk.text, want)
					}
				})
			}
		}
	}
}

// outcome is what one call gave: the result as JSON, or the error's class and text; the
// error the connection recorded (Conn.Overrun), if any; and the progress notifications
// the call's progress handler got.
type outcome struct {
	result   string
	class    string
	text     string
	overrun  string
	progress string
}

// diffConn opens a connection of kind to a fresh diffServer and a go-sdk session on it
// with protocol version; onProgress receives the session's progress notifications.
func diffConn(t *testing.T, ctx context.Context, kind, version string, onProgress func(*mcp.ProgressNotificationParams)) (*transport.Conn, *mcp.ClientSession) {
	t.Helper()
	var spec transport.Spec
	k := transport.KindStdio
	legacyHTTP := kind != "stdio" && version != wire.ModernProtocol
	switch kind {
	case "stdio":
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		spec = transport.Spec{ID: "diff", Command: exe, Env: map[string]string{diffServerEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
	default:
		srv := diffServer(func() {})
		opts := &mcp.StreamableHTTPOptions{Stateless: !legacyHTTP || kind == "http-nosession", JSONResponse: kind == "http-json"}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
		ts := httptest.NewServer(dropOnExit(forgetOnGone(askOnStream(h))))
		t.Cleanup(ts.Close)
		k, spec = transport.KindHTTP, transport.Spec{ID: "diff", URL: ts.URL + "/mcp"}
	}
	spec.MaxFrameBytes = diffLimit
	c, err := transport.Open(spec, k)
	if err != nil {
		t.Fatal(err)
	}
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { onProgress(r.Params) }}
	if !legacyHTTP {
		copts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"yes": true}}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "diff-test", Version: "1"}, copts)
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
	if got, want := cs.ID() != "", statefulKinds[kind] && legacyHTTP; got != want {
		t.Fatalf("session ID %q, want one: %v", cs.ID(), want)
	}
	return c, cs
}

// dropOnExit stands for the HTTP server's process exiting during a call of "exit": the
// connection is dropped without an answer.
func dropOnExit(h http.Handler) http.Handler {
	return onToolCall(h, "exit", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
	})
}

// forgetOnGone stands for a server that forgot the session (a restart, an idle timeout)
// when "gone" is called: the session is deleted (DELETE with its ID) and the call answered
// as go-sdk's handler answers a session it does not know.
func forgetOnGone(h http.Handler) http.Handler {
	return onToolCall(h, "gone", func(w http.ResponseWriter, r *http.Request, body []byte) {
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		del := httptest.NewRequestWithContext(r.Context(), http.MethodDelete, r.URL.String(), nil)
		del.Header.Set("Mcp-Session-Id", sid)
		del.Header.Set("Mcp-Protocol-Version", r.Header.Get("Mcp-Protocol-Version"))
		h.ServeHTTP(httptest.NewRecorder(), del)
		http.Error(w, "session not found", http.StatusNotFound)
	})
}

// askTool prefixes the tools of the scripted server (askOnStream): askTool+method sends a
// request of method on the call's event stream and answers with the client's reply.
const askTool = "ask:"

// askOnStream scripts, on 2025-11-25, the calls of askTool tools: the call's answer is an
// event stream carrying a request of the tool's method (go-sdk's server refuses to send
// what the client did not declare), then, once the client POSTed its reply, a result whose
// text is that reply as sent.
func askOnStream(h http.Handler) http.Handler {
	var mu sync.Mutex
	replies := map[string]chan []byte{}
	next := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") == wire.ModernProtocol {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		msgs, err := wire.DecodeLine(body, nil)
		if err != nil || len(msgs) != 1 {
			h.ServeHTTP(w, r)
			return
		}
		switch m := msgs[0].(type) {
		case *jsonrpc.Response:
			id, _ := m.ID.Raw().(string)
			mu.Lock()
			ch := replies[id]
			mu.Unlock()
			if ch == nil {
				h.ServeHTTP(w, r)
				return
			}
			ch <- bytes.Clone(body)
			w.WriteHeader(http.StatusAccepted)
			return
		case *jsonrpc.Request:
			var p struct{ Name string }
			if m.Method != "tools/call" || json.Unmarshal(m.Params, &p) != nil {
				h.ServeHTTP(w, r)
				return
			}
			method, ok := strings.CutPrefix(p.Name, askTool)
			if !ok {
				h.ServeHTTP(w, r)
				return
			}
			mu.Lock()
			next++
			id := fmt.Sprint("ask-", next)
			ch := make(chan []byte, 1)
			replies[id] = ch
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			ask, _ := wire.AppendMessage(nil, &jsonrpc.Request{ID: mustID(id), Method: method, Params: json.RawMessage(`{"message":"sure?","requestedSchema":{"type":"object"}}`)})
			fmt.Fprintf(w, "event: message\ndata: %s\n", ask)
			http.NewResponseController(w).Flush()
			var reply []byte
			select {
			case reply = <-ch:
			case <-r.Context().Done():
				return
			}
			res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "reply " + string(reply)}}})
			out, _ := wire.AppendMessage(nil, &jsonrpc.Response{ID: m.ID, Result: res})
			fmt.Fprintf(w, "event: message\ndata: %s\n", out)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

// onToolCall runs f for a tools/call POST of tool, passing its body; other requests go to h.
func onToolCall(h http.Handler, tool string, f func(http.ResponseWriter, *http.Request, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte(`"name":"`+tool+`"`)) {
				f(w, r, body)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// progressLog collects a call's progress notifications.
type progressLog struct {
	mu  sync.Mutex
	got []string
}

func (l *progressLog) add(p *mcp.ProgressNotificationParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, fmt.Sprintf("%v %v/%v %s", p.ProgressToken, p.Progress, p.Total, p.Message))
}

// wait returns the notifications once there are n, or what came by the deadline (go-sdk's
// session handles a notification on its own goroutine, possibly after the call returned).
func (l *progressLog) wait(n int) string {
	for deadline := time.Now().Add(5 * time.Second); ; {
		l.mu.Lock()
		got := strings.Join(l.got, "; ")
		done := len(l.got) >= n
		l.mu.Unlock()
		if done || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

// diffCall makes one call of tool on a fresh connection, through the direct client or
// through go-sdk's session.
func diffCall(t *testing.T, kind, version, tool string, direct bool) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var progress progressLog
	c, cs := diffConn(t, ctx, kind, version, progress.add)
	p := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(`{"a":1}`)}
	if tool == "progress" {
		p.Meta = mcp.Meta{"progressToken": "tok"}
	}
	var res *mcp.CallToolResult
	var err error
	if direct {
		if !c.Direct().DirectCalls(version) {
			t.Fatalf("DirectCalls(%q) = false", version)
		}
		res, err = c.Direct().CallTool(ctx, p, &wire.CallOptions{Protocol: version, OnProgress: progress.add})
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
	if tool == "progress" && kind != "http-json" {
		out.progress = progress.wait(2)
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
	case errors.Is(err, mcp.ErrSessionMissing):
		return "session missing"
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
// server's end reports, the port of an HTTP server (each call has its own) and the ID of
// its session.
var (
	elapsed = regexp.MustCompile(`after [0-9][0-9.]*(ns|µs|ms|s|m[0-9.]*s|h[0-9.m]*s)`)
	port    = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	sid     = regexp.MustCompile(`session ID: [^)]*`)
)

func normalize(s string) string {
	s = port.ReplaceAllString(elapsed.ReplaceAllString(s, "after <time>"), "127.0.0.1:<port>")
	return sid.ReplaceAllString(s, "session ID: <id>")
}

// TestStatefulDirectDeclines checks that a stateful Streamable HTTP session on 2025-11-25
// whose initialize declared roots, sampling or elicitation (go-sdk declares each when its
// handler is configured) stays on go-sdk's path, whose handlers answer the server's
// requests: DirectCalls is false and CallTool returns ErrNoDirectCall. A session that
// declared none of them takes the direct path.
func TestStatefulDirectDeclines(t *testing.T) {
	const version = "2025-11-25"
	for _, tc := range []struct {
		name   string
		caps   *mcp.ClientCapabilities
		opts   func(*mcp.ClientOptions)
		direct bool
	}{
		{name: "none", caps: &mcp.ClientCapabilities{}, direct: true},
		{name: "roots", caps: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}},
		{name: "sampling", caps: &mcp.ClientCapabilities{}, opts: func(o *mcp.ClientOptions) {
			o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{}, nil
			}
		}},
		{name: "elicitation", caps: &mcp.ClientCapabilities{}, opts: func(o *mcp.ClientOptions) {
			o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := diffServer(func() {})
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			t.Cleanup(ts.Close)
			c, err := transport.Open(transport.Spec{ID: "diff", URL: ts.URL + "/mcp"}, transport.KindHTTP)
			if err != nil {
				t.Fatal(err)
			}
			copts := &mcp.ClientOptions{Capabilities: tc.caps}
			if tc.opts != nil {
				tc.opts(copts)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "diff-test", Version: "1"}, copts).
				Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				c.Close()
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); c.Close() })
			if cs.ID() == "" {
				t.Fatal("no session ID: not a stateful session")
			}
			if got := c.Direct().DirectCalls(version); got != tc.direct {
				t.Fatalf("DirectCalls(%q) = %v, want %v", version, got, tc.direct)
			}
			_, err = c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: "ok", Arguments: json.RawMessage(`{}`)}, &wire.CallOptions{Protocol: version})
			if tc.direct && err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !tc.direct && !errors.Is(err, wire.ErrNoDirectCall) {
				t.Fatalf("CallTool: %v, want ErrNoDirectCall", err)
			}
		})
	}
}
