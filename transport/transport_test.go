package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/slack"
	"github.com/ttalk/mcpbridge/transport"
)

func TestKinds(t *testing.T) {
	tests := []struct {
		name    string
		spec    transport.Spec
		want    []transport.Kind
		wantErr string // substring; "" = no error
	}{
		{"command", transport.Spec{ID: "a", Command: "srv"}, []transport.Kind{transport.KindStdio}, ""},
		{"url", transport.Spec{ID: "a", URL: "https://h/mcp"}, []transport.Kind{transport.KindHTTP, transport.KindSSE}, ""},
		{"explicit sse", transport.Spec{ID: "a", Kind: transport.KindSSE, URL: "http://h/sse"}, []transport.Kind{transport.KindSSE}, ""},
		{"explicit http", transport.Spec{ID: "a", Kind: transport.KindHTTP, URL: "http://h/mcp"}, []transport.Kind{transport.KindHTTP}, ""},
		{"explicit stdio", transport.Spec{ID: "a", Kind: transport.KindStdio, Command: "x"}, []transport.Kind{transport.KindStdio}, ""},
		{"neither", transport.Spec{ID: "a"}, nil, `neither command nor url`},
		{"both", transport.Spec{ID: "a", Command: "x", URL: "http://h"}, nil, `both command and url`},
		{"unknown kind", transport.Spec{ID: "a", Kind: "ws", URL: "http://h"}, nil, `unknown type "ws"`},
		{"stdio without command", transport.Spec{ID: "a", Kind: transport.KindStdio, URL: "http://h"}, nil, `type "stdio" needs a command`},
		{"http without url", transport.Spec{ID: "a", Kind: transport.KindHTTP, Command: "x"}, nil, `type "http" needs a url`},
		{"sse without url", transport.Spec{ID: "a", Kind: transport.KindSSE, Command: "x"}, nil, `type "sse" needs a url`},
		{"ftp url", transport.Spec{ID: "a", URL: "ftp://alice:SECRETPW@h/x?token=SECRETTOK"}, nil, `url: scheme is not http or https`},
		{"no scheme", transport.Spec{ID: "a", URL: "alice:SECRETPW@h/x?token=SECRETTOK"}, nil, `url:`},
		{"bad url", transport.Spec{ID: "a", URL: "http://alice:SECRETPW@h/x?token=SECRETTOK%zz\x7f"}, nil, `url: not a valid URL`},
		{"no host", transport.Spec{ID: "a", URL: "http:///x?token=SECRETTOK"}, nil, `url: no host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transport.Kinds(tt.spec)
			if tt.wantErr == "" {
				if err != nil || !slices.Equal(got, tt.want) {
					t.Fatalf("Kinds = %v, %v; want %v", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Kinds error = %v; want it to contain %q", err, tt.wantErr)
			}
			for _, secret := range []string{"SECRETPW", "SECRETTOK", "alice"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains the secret %q", err, secret)
				}
			}
			if _, err := transport.Open(tt.spec, transport.KindHTTP); err == nil {
				t.Errorf("Open accepted an invalid spec")
			}
		})
	}
}

func TestOpenKindMismatch(t *testing.T) {
	if _, err := transport.Open(transport.Spec{ID: "a", Kind: transport.KindSSE, URL: "http://h"}, transport.KindHTTP); err == nil {
		t.Error("Open(http) of an sse spec succeeded")
	}
	if _, err := transport.Open(transport.Spec{ID: "a", URL: "http://h"}, ""); err == nil {
		t.Error("Open with no kind succeeded")
	}
}

// httpServer serves a go-sdk server over Streamable HTTP (JSON or SSE
// responses) or legacy SSE, recording every request.
type httpServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newHTTPServer(t *testing.T, kind transport.Kind, jsonResponse bool) *httpServer {
	t.Helper()
	srv := newServer()
	get := func(*http.Request) *mcp.Server { return srv }
	var h http.Handler
	if kind == transport.KindSSE {
		h = mcp.NewSSEHandler(get, nil)
	} else {
		h = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	}
	hs := &httpServer{}
	hs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs.mu.Lock()
		hs.reqs = append(hs.reqs, r.Clone(context.Background()))
		hs.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func (hs *httpServer) requests() []*http.Request {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.reqs)
}

func TestRawToolsPassThrough(t *testing.T) {
	tests := []struct {
		name         string
		kind         transport.Kind
		jsonResponse bool
	}{
		{"stdio", transport.KindStdio, false},
		{"streamable sse responses", transport.KindHTTP, false},
		{"streamable json responses", transport.KindHTTP, true},
		{"legacy sse", transport.KindSSE, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			var spec transport.Spec
			if tt.kind == transport.KindStdio {
				spec = stdioSpec(t, "raw", "server")
			} else {
				spec = transport.Spec{ID: "raw", URL: newHTTPServer(t, tt.kind, tt.jsonResponse).URL + "/mcp"}
			}
			c, err := transport.Open(spec, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, ctx, c)
			names := listAll(t, ctx, cs)
			if want := []string{"t0", "t1", "t2"}; !slices.Equal(names, want) {
				t.Fatalf("listed %v, want %v", names, want)
			}
			checkRawTools(t, c.TakeTools())
			if again := c.TakeTools(); len(again) != 0 {
				t.Errorf("second TakeTools returned %d tools, want 0", len(again))
			}
			// A second listing is captured again; calls are not captured.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("call: %v", err)
			}
			listAll(t, ctx, cs)
			checkRawTools(t, c.TakeTools())
			if !c.Reached() {
				t.Error("Reached() = false after a session")
			}
			if c.FallbackToSSE() {
				t.Error("FallbackToSSE() = true for a working server")
			}
		})
	}
}

func TestHeadersAndURLSecretsReachServer(t *testing.T) {
	tests := []struct {
		name string
		kind transport.Kind
	}{
		{"streamable", transport.KindHTTP},
		{"sse", transport.KindSSE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			hs := newHTTPServer(t, tt.kind, false)
			u := strings.Replace(hs.URL, "http://", "http://alice:pa%24s@", 1) + "/mcp?token=SEC%2FRET&v=2"
			spec := transport.Spec{ID: "hdr", URL: u, Headers: map[string]string{"X-Api-Key": "k-123", "X-Other": "o"}}
			c, err := transport.Open(spec, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, ctx, c)
			listAll(t, ctx, cs)
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("call: %v", err)
			}
			reqs := hs.requests()
			if len(reqs) < 3 {
				t.Fatalf("server saw %d requests, want at least 3", len(reqs))
			}
			gets := 0
			for i, r := range reqs {
				if got := r.Header.Get("X-Api-Key"); got != "k-123" {
					t.Errorf("request %d (%s %s): X-Api-Key = %q", i, r.Method, r.URL.Path, got)
				}
				if got := r.Header.Get("X-Other"); got != "o" {
					t.Errorf("request %d: X-Other = %q", i, got)
				}
				user, pw, ok := r.BasicAuth()
				if !ok || user != "alice" || pw != "pa$s" {
					t.Errorf("request %d: basic auth = %q, %q, %v", i, user, pw, ok)
				}
				// Streamable: every request goes to the endpoint. SSE: the
				// GET goes to the endpoint, POSTs to the URL the server gave.
				if r.Method == http.MethodGet || tt.kind == transport.KindHTTP {
					gets++
					if got := r.URL.Query().Get("token"); got != "SEC/RET" {
						t.Errorf("request %d (%s): token = %q, want the real value", i, r.Method, got)
					}
					if got := r.URL.Query().Get("v"); got != "2" {
						t.Errorf("request %d: v = %q", i, got)
					}
				}
			}
			if gets == 0 {
				t.Error("no request to the endpoint itself")
			}
		})
	}
}

func TestFallbackToSSE(t *testing.T) {
	ctx := testCtx(t)
	hs := newHTTPServer(t, transport.KindSSE, false)
	spec := transport.Spec{ID: "old", URL: hs.URL + "/sse"}
	kinds, err := transport.Kinds(spec)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	var used []transport.Kind
	for _, k := range kinds {
		c, err := transport.Open(spec, k)
		if err != nil {
			t.Fatal(err)
		}
		used = append(used, k)
		cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			c.Close()
			if !c.Reached() {
				t.Fatalf("%s: Reached() = false after an HTTP answer", k)
			}
			if c.FallbackToSSE() {
				continue
			}
			t.Fatalf("%s: connect: %v (no fallback signalled)", k, err)
		}
		listAll(t, ctx, cs)
		checkRawTools(t, c.TakeTools())
		cs.Close()
		c.Close()
		break
	}
	if want := []transport.Kind{transport.KindHTTP, transport.KindSSE}; !slices.Equal(used, want) {
		t.Fatalf("kinds used = %v, want %v", used, want)
	}
}

func TestNoFallbackSignal(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		want   bool
	}{
		{"405", http.StatusMethodNotAllowed, "text/plain", "nope", true},
		{"404", http.StatusNotFound, "text/plain", "nope", true},
		{"400", http.StatusBadRequest, "text/plain", "nope", true},
		{"html 200", http.StatusOK, "text/html", "nope", true},
		{"401", http.StatusUnauthorized, "text/plain", "nope", false},
		{"500", http.StatusInternalServerError, "text/plain", "nope", false},
		// A JSON-RPC error body comes from a Streamable HTTP server: no fallback, whatever
		// the status, so the error surfaces as itself.
		{"400 -32022", http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2025-11-25"}}}`, false},
		{"404 -32601", http.StatusNotFound, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, false},
		{"400 null error", http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":1,"error":null}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c, err := transport.Open(transport.Spec{ID: "x", URL: srv.URL}, transport.KindHTTP)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(testCtx(t), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				cs.Close()
				t.Fatal("connect succeeded")
			}
			var je *jsonrpc.Error
			if strings.Contains(tt.body, `"code"`) && (!errors.As(err, &je) || !strings.Contains(tt.body, je.Message)) {
				t.Errorf("connect error %v, want the server's JSON-RPC error", err)
			}
			if got := c.FallbackToSSE(); got != tt.want {
				t.Errorf("FallbackToSSE() = %v, want %v", got, tt.want)
			}
			if !c.Reached() {
				t.Error("Reached() = false")
			}
		})
	}
}

// deadURL returns a loopback address nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestErrorsHaveNoURLSecrets(t *testing.T) {
	secrets := []string{"SECRETTOKEN", "hunter2pw", "alice", "k-SECRETHDR"}
	addr := deadURL(t)
	tests := []struct {
		name string
		kind transport.Kind
		base http.RoundTripper
	}{
		{"streamable dead", transport.KindHTTP, nil},
		{"sse dead", transport.KindSSE, nil},
		// A base RoundTripper whose errors quote the real request URL and
		// headers: the transport must still not let them through.
		{"streamable leaky base", transport.KindHTTP, leakyRoundTripper{}},
		{"sse leaky base", transport.KindSSE, leakyRoundTripper{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := transport.Spec{
				ID:      "sec",
				URL:     "http://alice:hunter2pw@" + addr + "/mcp?token=SECRETTOKEN&x=1",
				Headers: map[string]string{"Authorization": "Bearer k-SECRETHDR"},
			}
			if tt.base != nil {
				spec.HTTPClient = &http.Client{Transport: tt.base}
			}
			c, err := transport.Open(spec, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(testCtx(t), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				cs.Close()
				t.Fatal("connect to a dead URL succeeded")
			}
			msg := err.Error()
			for _, s := range secrets {
				if strings.Contains(msg, s) {
					t.Errorf("error contains secret %q: %s", s, msg)
				}
			}
			if !strings.Contains(msg, "token=***") {
				t.Errorf("error does not show the redacted URL: %s", msg)
			}
			if c.Reached() || c.FallbackToSSE() {
				t.Errorf("Reached() = %v, FallbackToSSE() = %v; want false, false", c.Reached(), c.FallbackToSSE())
			}
		})
	}
}

// leakyRoundTripper fails every request with an error quoting its URL and
// Authorization header, like a careless proxy client would.
type leakyRoundTripper struct{}

func (leakyRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return nil, fmt.Errorf("cannot reach %s (auth %q, user %s)", r.URL.String(), r.Header.Get("Authorization"), "alice")
}

func TestStdioMissingCommand(t *testing.T) {
	tests := []struct {
		name    string
		spec    transport.Spec
		wantErr []string
	}{
		{"not in PATH", transport.Spec{ID: "gone", Command: "mcpbridge-no-such-command-xyz"},
			[]string{`"mcpbridge-no-such-command-xyz"`}},
		{"env PATH used", transport.Spec{ID: "envpath", Command: "go", Env: map[string]string{"PATH": "/nonexistent-mcpbridge-dir", "SECRET_ENV": "s3cr3t-value"}},
			[]string{`command "go"`, "PATH set in env"}},
		{"relative to dir", transport.Spec{ID: "rel", Command: "./no-such-server", Dir: t.TempDir()},
			[]string{`"./no-such-server"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := transport.Open(tt.spec, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			_, err = client.Connect(testCtx(t), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				t.Fatal("connect succeeded")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t-value") {
				t.Errorf("error contains an env value: %q", err)
			}
			if tt.name != "relative to dir" && !errors.Is(err, exec.ErrNotFound) {
				t.Errorf("error %q is not exec.ErrNotFound", err)
			}
			if c.Reached() {
				t.Error("Reached() = true without a process")
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			select {
			case <-c.Exited():
			default:
				t.Error("Exited() not closed after Close of a never-started Conn")
			}
		})
	}
}

func TestStdioEnvAndStderr(t *testing.T) {
	t.Setenv("MCPB_PARENT", "from-parent")
	ctx := testCtx(t)
	var logs logBuffer
	spec := stdioSpec(t, "envsrv", "env")
	spec.Env["MCPB_ADDED"] = "added"
	spec.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := transport.Open(spec, transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, ctx, c)
	listAll(t, ctx, cs)
	want := "ADDED=added PARENT=from-parent\n"
	waitFor(t, "env line in stderr", 10*time.Second, func() bool { return strings.Contains(c.Stderr(), want) })
	waitFor(t, "stderr line logged", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), `"server":"envsrv","line":"ADDED=added PARENT=from-parent"`)
	})
	if c.PID() <= 0 {
		t.Errorf("PID() = %d", c.PID())
	}
}

func TestStdioStderrFlood(t *testing.T) {
	ctx := testCtx(t)
	var logs logBuffer
	spec := stdioSpec(t, "flood", "flood")
	spec.StderrTailBytes = 1000
	spec.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := transport.Open(spec, transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs := session(t, ctx, c)
	listAll(t, ctx, cs)
	checkRawTools(t, c.TakeTools())
	t.Logf("connect + list after %d bytes of stderr: %v", floodBytes, time.Since(start))
	waitFor(t, "end of flood in the stderr tail", 10*time.Second, func() bool {
		return strings.HasSuffix(c.Stderr(), "END-OF-FLOOD é\n")
	})
	if tail := c.Stderr(); len(tail) > 1000 || len(tail) < 900 {
		t.Errorf("tail is %d bytes, want about 1000", len(tail))
	}
	waitFor(t, "last line logged", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "server=flood line=\"END-OF-FLOOD é\"")
	})
}

func TestStdioExit(t *testing.T) {
	c, err := transport.Open(stdioSpec(t, "exit", "exit3"), transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	conn, err := c.Transport().Connect(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("Exited() not closed after the process exited")
	}
	var ee *exec.ExitError
	if err := c.ExitError(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("ExitError() = %v, want exit status 3", err)
	}
	if _, err := conn.Read(testCtx(t)); err == nil {
		t.Error("Read after exit succeeded")
	}
	if _, err := c.Transport().Connect(testCtx(t)); !errors.Is(err, transport.ErrUsed) {
		t.Errorf("second Connect: %v, want ErrUsed", err)
	}
}

func TestCloseConcurrentWithSession(t *testing.T) {
	for _, kind := range []transport.Kind{transport.KindStdio, transport.KindHTTP, transport.KindSSE} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := testCtx(t)
			spec := stdioSpec(t, "cc", "server")
			if kind != transport.KindStdio {
				spec = transport.Spec{ID: "cc", URL: newHTTPServer(t, kind, false).URL}
			}
			c, err := transport.Open(spec, kind)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, ctx, c)
			listAll(t, ctx, cs)
			var wg sync.WaitGroup
			start := time.Now()
			for range 4 {
				wg.Add(2)
				go func() { defer wg.Done(); c.Close() }()
				go func() { defer wg.Done(); cs.Close() }()
			}
			wg.Wait()
			slack.Within(t, "closing", time.Since(start), 2*transport.DefaultGrace)
			if kind == transport.KindStdio {
				select {
				case <-c.Exited():
				default:
					t.Error("process not reaped when Close returned")
				}
			}
			if _, err := c.Transport().Connect(ctx); !errors.Is(err, transport.ErrUsed) {
				t.Errorf("Connect after Close: %v, want ErrUsed", err)
			}
		})
	}
}

func TestExitedNilForHTTP(t *testing.T) {
	c, err := transport.Open(transport.Spec{ID: "h", URL: "http://127.0.0.1:1/"}, transport.KindHTTP)
	if err != nil {
		t.Fatal(err)
	}
	if c.Exited() != nil || c.Stderr() != "" || c.PID() != 0 || c.Kind() != transport.KindHTTP {
		t.Errorf("Exited=%v Stderr=%q PID=%d Kind=%v", c.Exited(), c.Stderr(), c.PID(), c.Kind())
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close of an unused Conn: %v", err)
	}
}

func TestHeadersNotSentToOtherHosts(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "gone", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	spec := transport.Spec{ID: "redir", URL: strings.Replace(redirector.URL, "http://", "http://bob:pw@", 1) + "/mcp",
		Headers: map[string]string{"X-Api-Key": "k-123", "Authorization": "Bearer tok"}}
	c, err := transport.Open(spec, transport.KindHTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	if cs, err := client.Connect(testCtx(t), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
		cs.Close()
		t.Fatal("connect succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for i, h := range seen {
		if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
			t.Errorf("request %d to another host got X-Api-Key=%q Authorization=%q", i, h.Get("X-Api-Key"), h.Get("Authorization"))
		}
	}
}

// TestStdioBannerLines: a server that prints lines that are not JSON-RPC on stdout (before
// and between messages, one of them 1 MiB long with a frame limit of 64 KiB) still works;
// the lines are counted and logged rate-limited, escaped, with the server ID.
func TestStdioBannerLines(t *testing.T) {
	var logs logBuffer
	spec := stdioSpec(t, "noisy", "banner")
	spec.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	spec.MaxFrameBytes = 64 << 10
	c, err := transport.Open(spec, transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	cs := session(t, ctx, c)
	if names := listAll(t, ctx, cs); len(names) != len(schemas) {
		t.Fatalf("listed %v", names)
	}
	checkRawTools(t, c.TakeTools())
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "ok" {
		t.Fatalf("call result %+v", res.Content[0])
	}
	if n := c.NonProtocolLines(); n != bannerLines-1 { // blank lines are not counted
		t.Errorf("NonProtocolLines() = %d, want %d", n, bannerLines-1)
	}
	out := logs.String()
	logged := strings.Count(out, "non-JSON-RPC line on stdout")
	if logged < 1 || logged > 6 {
		t.Errorf("%d warnings logged for %d lines, want 1..6 (rate-limited):\n%s", logged, bannerLines-1, out)
	}
	for _, want := range []string{"level=WARN", "server=noisy", "Starting server… step 0", `x1b[31m`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("log has a raw escape character:\n%q", out)
	}
}

// TestStdioExitExplained: a server that dies during initialize is reported with its exit
// status, how long it ran, and its last stderr line or "nothing on stderr".
func TestStdioExitExplained(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"silent1", []string{"server process exited (exit status 1) after ", "nothing on stderr", "EOF"}},
		{"dies", []string{"server process exited (exit status 1) after ", `last stderr line: "fatal: GITHUB_TOKEN is not set\x1b[0m"`}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c, err := transport.Open(stdioSpec(t, tc.mode, tc.mode), transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			_, err = client.Connect(testCtx(t), c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err == nil {
				t.Fatal("Connect succeeded")
			}
			t.Logf("Connect: %v", err)
			var pe *transport.ProcessEnd
			if !errors.As(err, &pe) || !pe.Exited || pe.Ran <= 0 {
				t.Fatalf("error %v: no *ProcessEnd with an exit (%+v)", err, pe)
			}
			if !errors.Is(err, io.EOF) {
				t.Errorf("error %v does not wrap io.EOF", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDirectCalls: Conn.CallTool over stdio and in-process returns what go-sdk's CallTool
// returns (a result, a tool error, a JSON-RPC error), and a cancelled call's cancellation
// reaches the server.
func TestDirectCalls(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		})
	for _, kind := range []string{"inprocess", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			spec := transport.Spec{ID: "direct", InProcess: func() (mcp.Transport, error) {
				st, ct := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.Background(), st, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}}
			k := transport.KindInProcess
			if kind == "stdio" {
				spec, k = stdioSpec(t, "direct", "server"), transport.KindStdio
			}
			c, err := transport.Open(spec, k)
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			cs := session(t, ctx, c)
			if !c.Direct().DirectCalls("2025-11-25") {
				t.Fatal("DirectCalls() = false")
			}
			tool, args := "echo", json.RawMessage(`{"x":[1,"<é>"]}`)
			if kind == "stdio" {
				tool, args = "t0", json.RawMessage(`{"zeta":2}`)
			}
			for _, name := range []string{tool, "nosuchtool"} {
				got, gerr := c.Direct().CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, nil)
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
			if kind == "stdio" {
				return
			}
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := c.Direct().CallTool(cctx, &mcp.CallToolParams{Name: "slow"}, nil)
				done <- err
			}()
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				t.Fatal("the slow call did not reach the server")
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			select {
			case <-cancelled:
			case <-time.After(20 * time.Second):
				t.Fatal("the server's handler was not cancelled")
			}
		})
	}
}
