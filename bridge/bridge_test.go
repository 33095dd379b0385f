package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/slack"
	"github.com/ttalk/mcpbridge/results"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// connectSet connects cfgs; the set is closed when the test ends. err is Connect's own.
// Its ctx outlasts every connect timeout of opts and cfgs (at least 60 s), so a test that
// sets a longer one gets it.
func connectSet(t testing.TB, cfgs []bridge.ServerConfig, opts *bridge.Options) (*bridge.Set, error) {
	t.Helper()
	if opts == nil {
		opts = quiet()
	}
	d := max(60*time.Second, opts.ConnectTimeout+30*time.Second)
	for _, c := range cfgs {
		d = max(d, c.ConnectTimeout+30*time.Second)
	}
	set, err := bridge.Connect(ctxT(t, d), cfgs, opts)
	if set != nil {
		t.Cleanup(func() { _ = set.Close() })
	}
	return set, err
}

// connect connects cfgs and returns the model's tools; err is Connect's own error, else the
// set's failures joined (nil when every server worked).
func connect(t testing.TB, cfgs []bridge.ServerConfig, opts *bridge.Options) (bridge.Tools, error) {
	t.Helper()
	set, err := connectSet(t, cfgs, opts)
	if err != nil {
		return nil, err
	}
	return set.Tools(), failedErr(set)
}

func failedErr(set *bridge.Set) error {
	var errs []error
	for _, e := range set.Failed() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
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

func names(tools bridge.Tools) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestConnectAssemblesInConfigOrderAndSkipsFailures(t *testing.T) {
	cfgs := []bridge.ServerConfig{
		{ID: "missing", Command: "/nonexistent/mcp-server-xyz"},
		stdioConfig(t, "local", "basic"),
		{ID: "dead", Type: "http", URL: "http://127.0.0.1:1/mcp"},
		httpConfig(t, "remote", "clash", "http", nil),
	}
	var mu sync.Mutex
	statuses := map[string]bridge.ServerStatus{}
	opts := quiet()
	opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
		mu.Lock()
		statuses[st.ID] = st
		mu.Unlock()
	}
	tools, err := connect(t, cfgs, opts)
	if err == nil {
		t.Fatal("Connect: want an error for the two failed servers")
	}
	var failed []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *bridge.ServerError
		if !errors.As(e, &se) {
			t.Fatalf("error %v is not a *ServerError", e)
		}
		failed = append(failed, se.Server+":"+string(se.Phase))
	}
	if got, want := strings.Join(failed, ","), "missing:start,dead:start"; got != want {
		t.Errorf("failed servers = %s, want %s", got, want)
	}
	// Listing order (the go-sdk server sorts its tools by name), servers in config order.
	want := []string{"add", "doc", "echo", "exit", "fail", "picture", "pid", "sleep", "weather",
		"_9lives", "a_b", "remote__add", "remote__echo", "my_tool"}
	if got := names(tools); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tool order\n got %v\nwant %v", got, want)
	}
	for _, tool := range tools {
		if !bridge.ValidToolName(tool.Name) {
			t.Errorf("invalid name %q", tool.Name)
		}
	}
	if got := byName(t, tools, "my_tool").RemoteName; got != "my.tool" {
		t.Errorf("RemoteName = %q, want my.tool", got)
	}
	out, err := byName(t, tools, "remote__echo").Handler(ctxT(t, 10*time.Second), nil)
	if err != nil || out != "clash echo" {
		t.Errorf("remote__echo = %q, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) != 4 {
		t.Errorf("OnStatus called for %d servers, want 4", len(statuses))
	}
	if st := statuses["local"]; st.Err != nil || st.ServerName != "fixture-basic" || st.ServerVersion != "1.2.3" || st.Transport != "stdio" || st.ProtocolVersion == "" {
		t.Errorf("local status = %+v", st)
	}
	if st := statuses["dead"]; st.Err == nil || st.Err.Phase != bridge.PhaseStart {
		t.Errorf("dead status = %+v", st)
	}
}

func TestParametersAreTheBytesTheServerSent(t *testing.T) {
	for _, typ := range []string{"stdio", "http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			var cfg bridge.ServerConfig
			if typ == "stdio" {
				cfg = stdioConfig(t, "s", "basic")
			} else {
				cfg = httpConfig(t, "s", "basic", typ, nil)
			}
			tools, err := connect(t, []bridge.ServerConfig{cfg}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(byName(t, tools, "echo").Parameters); got != echoSchema {
				t.Errorf("echo Parameters\n got %s\nwant %s", got, echoSchema)
			}
			if got := string(byName(t, tools, "add").Parameters); got != addSchema {
				t.Errorf("add Parameters = %s", got)
			}
			// The one documented fix: a bare object schema gains "properties":{}.
			if got := string(byName(t, tools, "weather").Parameters); got != `{"type":"object","properties":{}}` {
				t.Errorf("weather Parameters = %s", got)
			}
			b, err := json.Marshal(byName(t, tools, "add"))
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"name":"add","description":"Adds.","parameters":` + addSchema + `}`; string(b) != want {
				t.Errorf("json.Marshal(tool) = %s\nwant %s", b, want)
			}
		})
	}
}

func TestAutoTypeFallsBackToSSE(t *testing.T) {
	cfg := httpConfig(t, "old", "basic", "sse", nil)
	cfg.Type = ""
	var status bridge.ServerStatus
	opts := quiet()
	opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) { status = st }
	tools, err := connect(t, []bridge.ServerConfig{cfg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if status.Transport != "sse" {
		t.Errorf("transport = %q, want sse", status.Transport)
	}
	out, err := byName(t, tools, "add").Handler(ctxT(t, 10*time.Second), json.RawMessage(`{"a":1,"b":2}`))
	if err != nil || out != "3" {
		t.Errorf("add = %q, %v", out, err)
	}
	if h := tools[0].Server.Hash(); h != apps.ServerHash("sse", cfg.URL) {
		t.Errorf("Hash = %s, want the sse hash", h)
	}
}

func TestEveryPageIsListed(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{httpConfig(t, "p", "paged", "http", nil)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(tools), ","); got != "t00,t01,t02,t03,t04,t05,t06,t07,t08,t09" {
		t.Errorf("tools = %s", got)
	}
}

func TestHandlerFlattensResults(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args, want string
		toolErr          bool
	}{
		{"echo", `{"z":"hi","a":1}`, "echo: hi", false},
		{"add", `{"a":2,"b":3.5}`, "5.5", false},
		// structuredContent first (no HTML escaping), the echo text dropped, other text kept.
		{"weather", ``, "{\"sky\":\"<clear> & calm\",\"temp\":21}\nNice day.", false},
		{"weather", `null`, "{\"sky\":\"<clear> & calm\",\"temp\":21}\nNice day.", false},
		{"doc", `""`, "the notes", false},
		{"fail", `{}`, "disk full", true},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			out, err := byName(t, tools, tt.tool).Handler(ctxT(t, 10*time.Second), json.RawMessage(tt.args))
			var te *results.ToolError
			if tt.toolErr {
				if !errors.As(err, &te) || te.Text != tt.want {
					t.Fatalf("err = %v, want *results.ToolError %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("out = %q, want %q", out, tt.want)
			}
		})
	}
	out, err := byName(t, tools, "picture").Handler(ctxT(t, 10*time.Second), nil)
	if err != nil || !strings.Contains(out, "image/png") || strings.Contains(out, "AAAA") {
		t.Errorf("picture = %q, %v; want a placeholder naming image/png and no base64", out, err)
	}
}

func TestInvalidArgumentsNeverReachTheServer(t *testing.T) {
	c := &counters{}
	tools, err := connect(t, []bridge.ServerConfig{httpConfig(t, "s", "basic", "http", c)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, args, want string }{
		{"add", `[1,2]`, "must be a JSON object, got an array"},
		{"add", `"x"`, "got a string"},
		{"add", `{"a":1}`, "at /: missing property 'b' (rule required)"},
		{"add", `{"a":"one","b":2}`, "at /a: got string, want number (rule properties/a/type)"},
		{"echo", `{"z":""}`, "at /z: minLength"},
		{"echo", `{"z":"x","extra":1}`, "additionalProperties"},
		{"echo", `{"z":"x",`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			_, err := byName(t, tools, tt.tool).Handler(ctxT(t, 10*time.Second), json.RawMessage(tt.args))
			if !errors.Is(err, bridge.ErrInvalidArguments) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalidArguments containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), `"`+tt.tool+`"`) {
				t.Errorf("error does not name the tool: %v", err)
			}
		})
	}
	if n := c.calls.Load(); n != 0 {
		t.Errorf("server saw %d calls, want 0", n)
	}
	opts := quiet()
	opts.DisableValidation = true
	tools2, err := connect(t, []bridge.ServerConfig{httpConfig(t, "s", "basic", "http", c)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := byName(t, tools2, "add").Handler(ctxT(t, 10*time.Second), json.RawMessage(`{"a":"one","b":2}`)); err != nil {
		t.Errorf("validation off: %v", err)
	}
	if n := c.calls.Load(); n != 1 {
		t.Errorf("server saw %d calls with validation off, want 1", n)
	}
}

func TestAppTools(t *testing.T) {
	var got []apps.Activity
	var mu sync.Mutex
	opts := quiet()
	opts.OnAppResult = func(_ context.Context, a apps.Activity) {
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
	}
	cfg := httpConfig(t, "ui", "apps", "http", nil)
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tools := set.Tools()
	if got := strings.Join(names(tools), ","); got != "get-time,legacy-app,model-only" {
		t.Fatalf("model tools = %s (poll is app-only)", got)
	}
	gt := byName(t, tools, "get-time")
	if gt.UIResource != "ui://time/app.html" || gt.Description != "Time.\n[UI Resource: ui://time/app.html]" {
		t.Errorf("get-time = %q %q", gt.UIResource, gt.Description)
	}
	if lg := byName(t, tools, "legacy-app"); lg.UIResource != "ui://legacy/app.html" {
		t.Errorf("legacy flat key: UIResource = %q", lg.UIResource)
	}
	if mo := byName(t, tools, "model-only"); mo.UIResource != "" {
		t.Errorf("malformed resourceUri should be ignored, got %q", mo.UIResource)
	}
	// App tools: the model reads content, not structuredContent.
	out, err := gt.Handler(ctxT(t, 10*time.Second), nil)
	if err != nil || out != "It is noon." {
		t.Errorf("get-time = %q, %v", out, err)
	}
	mu.Lock()
	if len(got) != 1 || got[0].ResourceURI != "ui://time/app.html" || got[0].ServerID != "ui" ||
		got[0].ServerHash != apps.ServerHash("http", cfg.URL) || string(got[0].ToolInput) != "{}" || got[0].Result == nil {
		t.Errorf("activity = %+v", got)
	}
	mu.Unlock()

	ctx := ctxT(t, 10*time.Second)
	hash := gt.Server.Hash()
	raw, err := set.Proxy(ctx, apps.ProxyRequest{ServerHash: hash, Method: "tools/call", Params: json.RawMessage(`{"name":"poll","arguments":{}}`)})
	if err != nil || !strings.Contains(string(raw), "polled") {
		t.Errorf("proxy app-only call = %s, %v", raw, err)
	}
	raw, err = set.Proxy(ctx, apps.ProxyRequest{ServerID: "ui", Method: "resources/read", Params: json.RawMessage(`{"uri":"ui://time/app.html"}`)})
	var rr struct{ Contents []struct{ Text string } }
	if err != nil || json.Unmarshal(raw, &rr) != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "<html>time</html>" {
		t.Errorf("proxy resources/read = %s, %v", raw, err)
	}
	refusals := []struct {
		req  apps.ProxyRequest
		want error
	}{
		{apps.ProxyRequest{ServerID: "ui", Method: "tools/call", Params: json.RawMessage(`{"name":"model-only"}`)}, apps.ErrToolNotAllowed},
		{apps.ProxyRequest{ServerID: "ui", Method: "tools/list"}, apps.ErrMethodNotAllowed},
		{apps.ProxyRequest{ServerHash: "0123", Method: "ping"}, apps.ErrUnknownServer},
		{apps.ProxyRequest{ServerID: "ui", Method: "tools/call", Params: json.RawMessage(`{"name":"nope"}`)}, apps.ErrToolNotAllowed},
	}
	for _, r := range refusals {
		if _, err := set.Proxy(ctx, r.req); !errors.Is(err, r.want) {
			t.Errorf("Proxy(%+v) = %v, want %v", r.req, err, r.want)
		}
	}
	if s, ok := set.Lookup(hash); !ok || s.ID() != "ui" {
		t.Errorf("Lookup(hash) = %v, %v", s, ok)
	}
}

func TestConcurrentCalls(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	add := byName(t, tools, "add")
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			out, err := add.Handler(ctxT(t, 30*time.Second), json.RawMessage(`{"a":`+strconv.Itoa(i)+`,"b":1}`))
			if err == nil && out != strconv.Itoa(i+1) {
				err = errors.New("call " + strconv.Itoa(i) + " got " + out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestCloseLeavesNoChildProcess(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := byName(t, tools, "pid").Handler(ctxT(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		t.Fatal(err)
	}
	if !processExists(pid) {
		t.Fatalf("server pid %d not alive before Close", pid)
	}
	if err := tools.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	// Close waits for the process to be reaped: it must be gone at once, not eventually.
	if !processGone(pid, 100*time.Millisecond) {
		t.Errorf("server pid %d still exists (or is a zombie) after Close", pid)
	}
	if _, err := byName(t, tools, "pid").Handler(ctxT(t, 10*time.Second), nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close = %v, want a closed error", err)
	}
}

func TestRedialAfterServerExit(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 30*time.Second)
	pid1, err := byName(t, tools, "pid").Handler(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = byName(t, tools, "exit").Handler(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "may have run") {
		t.Fatalf("exit: err = %v, want 'may have run'", err)
	}
	// The next call redials transparently.
	pid2, err := byName(t, tools, "pid").Handler(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pid1 == pid2 {
		t.Errorf("same pid %s after the server exited", pid1)
	}
	out, err := byName(t, tools, "add").Handler(ctx, json.RawMessage(`{"a":1,"b":1}`))
	if err != nil || out != "2" {
		t.Errorf("add after redial = %q, %v", out, err)
	}
}

func TestCancelReturnsPromptlyAndSessionStaysUsable(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t, 30*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := byName(t, tools, "sleep").Handler(ctx, json.RawMessage(`{"ms":60000}`))
		done <- err
	}()
	time.AfterFunc(100*time.Millisecond, cancel)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	out, err := byName(t, tools, "add").Handler(ctxT(t, 10*time.Second), json.RawMessage(`{"a":1,"b":1}`))
	if err != nil || out != "2" {
		t.Errorf("after cancel: %q, %v", out, err)
	}
	opts := quiet()
	opts.CallTimeout = 200 * time.Millisecond
	tools2, err := connect(t, []bridge.ServerConfig{stdioConfig(t, "s", "basic")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = byName(t, tools2, "sleep").Handler(context.Background(), json.RawMessage(`{"ms":60000}`))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "tools/call") {
		t.Errorf("CallTimeout: %v", err)
	}
}

func TestRequiredServerFailsConnect(t *testing.T) {
	cfgs := []bridge.ServerConfig{
		stdioConfig(t, "ok", "basic"),
		{ID: "needed", Command: "/nonexistent/mcp", Required: true},
	}
	tools, err := connect(t, cfgs, nil)
	if err == nil || len(tools) != 0 || !strings.Contains(err.Error(), `required mcp server "needed"`) {
		t.Fatalf("tools=%d err=%v", len(tools), err)
	}
}

func TestLogsNeverContainSecrets(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secrets := []string{"hdr-SECRET-1", "env-SECRET-2", "url-SECRET-3", "pass-SECRET-4", "client-SECRET-5", "key-SECRET-6"}
	basic := stdioConfig(t, "local", "basic")
	basic.Env["API_KEY"] = secrets[1]
	cfgs := []bridge.ServerConfig{
		basic,
		{ID: "dead", Type: "http", URL: "http://user:" + secrets[3] + "@127.0.0.1:1/mcp?token=" + secrets[2], Headers: map[string]string{"Authorization": "Bearer " + secrets[0]}},
		{ID: "dead-sse", URL: "http://127.0.0.1:1/sse?key=" + secrets[2], Headers: map[string]string{"X-Key": secrets[0]}},
		{ID: "dead-oauth", URL: "http://127.0.0.1:1/mcp?key=" + secrets[2], Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth, ClientID: "c", ClientSecret: secrets[4]}},
		{ID: "dead-cc", URL: "http://127.0.0.1:1/mcp", Auth: &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "c", ClientSecret: secrets[4]}},
		{ID: "bad-key", URL: "http://127.0.0.1:1/mcp", Auth: &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "c",
			TokenEndpointAuth: "private_key_jwt", PrivateKey: "-----BEGIN PRIVATE KEY-----\n" + secrets[5] + "\n-----END PRIVATE KEY-----\n"}},
	}
	opts := &bridge.Options{Logger: logger, TokenStore: &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}}
	var statusText []string
	opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
		mu.Lock()
		defer mu.Unlock()
		if st.Err != nil {
			statusText = append(statusText, st.Err.Error())
		}
	}
	tools, err := connect(t, cfgs, opts)
	if err == nil {
		t.Fatal("want errors for the dead servers")
	}
	_, _ = byName(t, tools, "fail").Handler(ctxT(t, 10*time.Second), nil)
	mu.Lock()
	all := buf.String() + err.Error() + strings.Join(statusText, "\n")
	for _, c := range cfgs {
		all += c.String() + c.GoString()
	}
	mu.Unlock()
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("secret %q leaked:\n%s", s, all)
		}
	}
	if !strings.Contains(buf.String(), "server=local") {
		t.Errorf("debug log has no server= lines:\n%s", buf.String())
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestInProcessServer(t *testing.T) {
	c := &counters{}
	cfg := inProcessConfig(t, "mem", "basic", c)
	var st bridge.ServerStatus
	opts := quiet()
	opts.OnStatus = func(_ context.Context, s bridge.ServerStatus) { st = s }
	tools, err := connect(t, []bridge.ServerConfig{cfg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Transport != "inprocess" {
		t.Errorf("transport = %q", st.Transport)
	}
	if got := string(byName(t, tools, "echo").Parameters); got != echoSchema {
		t.Errorf("Parameters = %s", got)
	}
	out, err := byName(t, tools, "add").Handler(ctxT(t, 10*time.Second), json.RawMessage(`{"a":40,"b":2}`))
	if err != nil || out != "42" || c.calls.Load() != 1 {
		t.Errorf("add = %q, %v (calls %d)", out, err, c.calls.Load())
	}
	if h := tools[0].Server.Hash(); h != apps.ServerHash("inprocess", "mem") {
		t.Errorf("Hash = %s", h)
	}
	bad := bridge.ServerConfig{ID: "both", Command: "x", InProcess: cfg.InProcess}
	if _, err := bridge.Dial(ctxT(t, 5*time.Second), bad, quiet()); err == nil || !strings.Contains(err.Error(), "neither command nor url") {
		t.Errorf("Dial with command and InProcess: %v", err)
	}
}

func TestProgressReachesTheCaller(t *testing.T) {
	for _, typ := range []string{"stdio", "http"} {
		t.Run(typ, func(t *testing.T) {
			cfg := stdioConfig(t, "p", "progress")
			if typ == "http" {
				cfg = httpConfig(t, "p", "progress", "http", nil)
			}
			tools, err := connect(t, []bridge.ServerConfig{cfg}, nil)
			if err != nil {
				t.Fatal(err)
			}
			steps := byName(t, tools, "steps")
			// Without WithProgress no token is sent.
			if out, err := steps.Handler(ctxT(t, 10*time.Second), nil); err != nil || out != "no token" {
				t.Fatalf("plain call = %q, %v", out, err)
			}
			var mu sync.Mutex
			var got []bridge.Progress
			ctx := bridge.WithProgress(ctxT(t, 10*time.Second), func(_ context.Context, p bridge.Progress) {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			})
			if out, err := steps.Handler(ctx, nil); err != nil || out != "done" {
				t.Fatalf("call = %q, %v", out, err)
			}
			// Notifications are handled on their own goroutine and may trail the result.
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n == 3 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 3 {
				t.Fatalf("got %d progress notifications, want 3: %+v", len(got), got)
			}
			for i, p := range got {
				if p.Server != "p" || p.Tool != "steps" || p.Progress != float64(i+1) || p.Total != 3 || p.Message != fmt.Sprintf("step %d", i+1) {
					t.Errorf("progress %d = %+v", i, p)
				}
			}
		})
	}
}

// The client advertises the MCP Apps extension unless told not to.
func TestAppsExtensionCapability(t *testing.T) {
	for _, off := range []bool{false, true} {
		seen := make(chan map[string]any, 1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "caps", Version: "1"}, &mcp.ServerOptions{
			InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
				seen <- req.Session.InitializeParams().Capabilities.Extensions
			},
		})
		srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(ts.Close)
		opts := quiet()
		opts.DisableAppsExtension = off
		if _, err := connect(t, []bridge.ServerConfig{{ID: "caps", URL: ts.URL}}, opts); err != nil {
			t.Fatal(err)
		}
		var ext map[string]any
		select {
		case ext = <-seen:
		case <-time.After(10 * time.Second):
			t.Fatal("server never saw initialized")
		}
		ui, ok := ext[apps.ExtensionID].(map[string]any)
		switch {
		case off && ok:
			t.Errorf("DisableAppsExtension: extension still advertised: %v", ext)
		case !off && (!ok || fmt.Sprint(ui["mimeTypes"]) != "[text/html;profile=mcp-app]"):
			t.Errorf("extensions = %v, want %s with mimeTypes [text/html;profile=mcp-app]", ext, apps.ExtensionID)
		}
	}
}

func TestInvalidIDsFailConnectWithoutStartingAnything(t *testing.T) {
	pl := newProcLog(t)
	set, err := bridge.Connect(ctxT(t, 30*time.Second), []bridge.ServerConfig{
		rawConfig(t, "same", "basic", pl),
		inProcessConfig(t, "same", "clash", nil),
		{Command: "x"},
	}, quiet())
	if set != nil || err == nil || !strings.Contains(err.Error(), `duplicate server ID "same"`) || !strings.Contains(err.Error(), "server #3 has no ID") {
		t.Errorf("set = %v, err = %v", set, err)
	}
	if n := len(pl.starts()); n != 0 {
		t.Errorf("%d processes started for an invalid configuration", n)
	}
}

// A result whose structuredContent does not match the tool's outputSchema is still given to
// the model, with a warning in the log.
func TestOutputSchemaMismatchIsWarned(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "out", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "weather", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"temp": "warm"}}, nil
		})
	var buf bytes.Buffer
	var mu sync.Mutex
	cfg := bridge.ServerConfig{ID: "out", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}
	tools, err := connect(t, []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools[0].Handler(ctxT(t, 10*time.Second), nil)
	if err != nil || out != `{"temp":"warm"}` {
		t.Errorf("out = %q, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "does not match the tool's outputSchema") || !strings.Contains(buf.String(), "tool=weather") {
		t.Errorf("no outputSchema warning in log:\n%s", buf.String())
	}
}

// Problems with a server's tools are warned once, not again on every redial.
func TestToolProblemsWarnedOnce(t *testing.T) {
	srv := newFixture("apps", nil)
	cfg := bridge.ServerConfig{ID: "ui", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}
	var buf bytes.Buffer
	var mu sync.Mutex
	tools, err := connect(t, []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	getTime := byName(t, tools, "get-time")
	for round := range 3 {
		for ss := range srv.Sessions() {
			_ = ss.Close() // the server drops the session: the next request redials
		}
		// Ping is safe to retry, so it redials whatever state the old session is in.
		if err := getTime.Server.Ping(ctxT(t, 10*time.Second)); err != nil {
			t.Fatalf("round %d: ping: %v", round, err)
		}
		if _, err := getTime.Handler(ctxT(t, 10*time.Second), nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(buf.String(), "reconnecting"); n < 3 {
		t.Fatalf("%d reconnects, want 3:\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), "MCP Apps metadata"); n != 1 {
		t.Errorf("the model-only tool's metadata problem was logged %d times, want once:\n%s", n, buf.String())
	}
}

// A server that changes its tools while connected: removed tools fail clearly, changed
// schemas are validated anew, added tools are callable through the server.
// Tool-list changes arrive through 2026-07-28's subscriptions/listen and through the older
// notifications/tools/list_changed.
// In a set of several servers the subscription is opened after the listing (listenhold.go),
// which must not stop later changes from arriving.
func TestToolListChanged(t *testing.T) {
	for _, pin := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(pin, func(t *testing.T) { toolListChanged(t, pin, false) })
		t.Run(pin+"/in a set", func(t *testing.T) { toolListChanged(t, pin, true) })
	}
}

func toolListChanged(t *testing.T, pin string, inSet bool) {
	srv := newFixture("basic", nil)
	cfg := bridge.ServerConfig{ID: "live", ProtocolVersion: pin, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}
	changes := make(chan bridge.ToolsChange, 8)
	opts := quiet()
	opts.OnToolsChanged = func(_ context.Context, c bridge.ToolsChange) { changes <- c }
	cfgs := []bridge.ServerConfig{cfg}
	if inSet {
		other := inProcessConfig(t, "other", "paged", nil)
		other.ProtocolVersion = pin
		cfgs = append(cfgs, other)
	}
	tools, err := connect(t, cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := tools[0].Server.Status().ProtocolVersion; v != pin {
		t.Fatalf("protocol %s, want %s", v, pin)
	}
	srv.RemoveTools("echo")
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("new add"), nil })
	srv.AddTool(&mcp.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("fresh"), nil })
	var added, removed []string
	deadline := time.After(10 * time.Second)
	for !slices.Contains(added, "fresh") || !slices.Contains(removed, "echo") {
		select {
		case c := <-changes:
			if c.Server != "live" {
				t.Errorf("change from %q", c.Server)
			}
			added, removed = append(added, c.Added...), append(removed, c.Removed...)
		case <-deadline:
			t.Fatalf("changes seen: added %v removed %v", added, removed)
		}
	}
	ctx := ctxT(t, 10*time.Second)
	if _, err := byName(t, tools, "echo").Handler(ctx, json.RawMessage(`{"z":"x"}`)); !errors.Is(err, bridge.ErrToolGone) || !strings.Contains(err.Error(), `tool "echo"`) {
		t.Errorf("removed tool: %v", err)
	}
	if out, err := byName(t, tools, "add").Handler(ctx, json.RawMessage(`{"a":"text"}`)); err != nil || out != "new add" {
		t.Errorf("changed schema: %q, %v (validated against the old schema?)", out, err)
	}
	res, err := tools[0].Server.CallTool(ctx, "fresh", nil)
	if err != nil || res.IsError {
		t.Errorf("added tool through CallTool: %+v, %v", res, err)
	}
	for _, tool := range tools {
		if tool.RemoteName == "fresh" {
			t.Error("an added tool joined the model's fixed list")
		}
	}
}

// A host callback may close the set it came from; Close then returns at once rather than
// waiting for the callback's own goroutine (which would be a deadlock, caught by the slack).
func TestCloseFromInsideCallbacks(t *testing.T) {
	closeTimed := func(t *testing.T, closeFn func() error) time.Duration {
		start := time.Now()
		_ = closeFn()
		return time.Since(start)
	}
	t.Run("OnToolsChanged", func(t *testing.T) {
		srv := newFixture("basic", nil)
		cfg := bridge.ServerConfig{ID: "live", InProcess: func() (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			_, err := srv.Connect(context.Background(), st, nil)
			return ct, err
		}}
		var set *bridge.Set
		ready := make(chan struct{})
		took := make(chan time.Duration, 1)
		opts := quiet()
		opts.OnToolsChanged = func(context.Context, bridge.ToolsChange) {
			<-ready
			took <- closeTimed(t, set.Close)
		}
		set, err := connectSet(t, []bridge.ServerConfig{cfg}, opts)
		if err != nil {
			t.Fatal(err)
		}
		close(ready)
		srv.RemoveTools("echo")
		select {
		case d := <-took:
			slack.Within(t, "Close from OnToolsChanged", d, 0)
		case <-time.After(2 * time.Minute):
			t.Fatal("OnToolsChanged never ran")
		}
	})
	t.Run("OnAppResult", func(t *testing.T) {
		var set *bridge.Set
		took := make(chan time.Duration, 1)
		opts := quiet()
		opts.OnAppResult = func(context.Context, apps.Activity) { took <- closeTimed(t, set.Close) }
		set, err := connectSet(t, []bridge.ServerConfig{httpConfig(t, "ui", "apps", "http", nil)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := byName(t, set.Tools(), "get-time").Handler(ctxT(t, 10*time.Second), nil); err != nil {
			t.Fatal(err)
		}
		slack.Within(t, "Close from OnAppResult", <-took, 0)
	})
	t.Run("progress", func(t *testing.T) {
		// Over HTTP: a stdio fixture busy in a call takes its grace period to stop, which is
		// the process teardown, not the callback.
		set, err := connectSet(t, []bridge.ServerConfig{httpConfig(t, "p", "progress", "http", nil)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		took := make(chan time.Duration, 1)
		var once sync.Once
		ctx := bridge.WithProgress(ctxT(t, 2*time.Minute), func(context.Context, bridge.Progress) {
			once.Do(func() { took <- closeTimed(t, set.Tools().Close) })
		})
		_, _ = byName(t, set.Tools(), "steps").Handler(ctx, nil) // may fail: the set closed mid-call
		select {
		case d := <-took:
			slack.Within(t, "Tools.Close from a progress callback", d, 0)
		case <-time.After(2 * time.Minute):
			t.Fatal("no progress notification")
		}
	})
}
