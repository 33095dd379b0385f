package bridge_test

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/slack"
)

// Chaos tests: real processes (this test binary re-executed as a raw JSON-RPC or go-sdk
// fixture, see runRawServer) and real HTTP servers that misbehave. They never sleep
// blindly: they poll with deadlines.

// closeSteps is how long closing a process that ignores stdin EOF and SIGTERM takes:
// transport.DefaultGrace (2s) twice, then SIGKILL (+1s). Tests allow it slack.Limit.
const closeSteps = 2*2*time.Second + time.Second

// closeBound is how long a test waits for a closed server's processes to be gone.
var closeBound = slack.Limit(closeSteps)

// procLog reads what the fixture processes of one test wrote: their starts and events.
type procLog struct {
	spawns, events string
}

type spawnRec struct{ pid, ppid int }

func newProcLog(t testing.TB) *procLog {
	dir := t.TempDir()
	return &procLog{spawns: filepath.Join(dir, "spawns"), events: filepath.Join(dir, "events")}
}

// rawConfig runs raw fixture mode as a child process writing to pl.
func rawConfig(t testing.TB, id, mode string, pl *procLog) bridge.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bridge.ServerConfig{ID: id, Command: exe, Env: map[string]string{
		rawEnv: mode, spawnLogEnv: pl.spawns, eventLogEnv: pl.events,
		// A -race binary sleeps 1s in exit by default; the fixtures exit often.
		"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0"),
	}}
}

func (pl *procLog) starts() []spawnRec {
	b, _ := os.ReadFile(pl.spawns)
	var out []spawnRec
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, spawnRec{pid, ppid})
	}
	return out
}

func (pl *procLog) seen() []string {
	b, _ := os.ReadFile(pl.events)
	return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
}

// waitFor polls cond every 10ms until it holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func (pl *procLog) waitEvent(t testing.TB, ev string, d time.Duration) {
	t.Helper()
	ev = strings.ReplaceAll(ev, " ", "_")
	if !waitFor(d, func() bool { return slices.Contains(pl.seen(), ev) }) {
		t.Fatalf("the server never logged %q (events: %v)", ev, pl.seen())
	}
}

func (pl *procLog) waitStarts(t testing.TB, n int, d time.Duration) []spawnRec {
	t.Helper()
	if !waitFor(d, func() bool { return len(pl.starts()) >= n }) {
		t.Fatalf("%d process starts, want %d", len(pl.starts()), n)
	}
	return pl.starts()
}

// allGone checks that every process the fixtures started has exited and been reaped.
func (pl *procLog) allGone(t testing.TB, d time.Duration) {
	t.Helper()
	for _, s := range pl.starts() {
		if !processGone(s.pid, d) {
			t.Errorf("fixture process %d still exists", s.pid)
		}
	}
}

func dialT(t testing.TB, cfg bridge.ServerConfig, opts *bridge.Options) *bridge.Server {
	t.Helper()
	if opts == nil {
		opts = quiet()
	}
	s, err := bridge.Dial(ctxT(t, 30*time.Second), cfg, opts)
	if err != nil {
		t.Fatalf("Dial %s: %v", cfg.ID, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func callText(ctx context.Context, s *bridge.Server, tool string) (string, error) {
	res, err := s.CallTool(ctx, tool, nil)
	if err != nil {
		return "", err
	}
	if len(res.Content) != 1 {
		return "", errors.New("want one content block")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", errors.New("want a text block")
	}
	return tc.Text, nil
}

func asServerError(t testing.TB, err error) *bridge.ServerError {
	t.Helper()
	var se *bridge.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *bridge.ServerError", err, err)
	}
	return se
}

// 1. A server that never answers initialize costs Connect its ConnectTimeout, nothing more,
// and never another server's tools.
func TestChaosHangAtStart(t *testing.T) {
	pl := newProcLog(t)
	hang := rawConfig(t, "hang", "hang", pl)
	hang.ConnectTimeout = time.Second
	cfgs := []bridge.ServerConfig{hang, rawConfig(t, "ok", "basic", newProcLog(t))}
	opts := quiet()
	var hangDone atomic.Int64 // when the hanging server's start-up ended, in ns since start
	start := time.Now()
	opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
		if st.ID == "hang" {
			hangDone.Store(int64(time.Since(start)))
		}
	}
	tools, err := connect(t, cfgs, opts)
	elapsed := time.Since(start)
	// The healthy server may be slow to start on a loaded machine; the hanging one must
	// cost its timeout and no more.
	// (The exact schedule is TestHangAtStartCostsItsTimeout, with fake time.)
	d := time.Duration(hangDone.Load())
	if d < hang.ConnectTimeout {
		t.Errorf("the hanging server was given up after %s with a 1s ConnectTimeout", d)
	}
	slack.Within(t, "giving up the hanging server", d, hang.ConnectTimeout)
	slack.Within(t, "Connect", elapsed, hang.ConnectTimeout)
	se := asServerError(t, err)
	if se.Server != "hang" || se.Phase != bridge.PhaseInitialize || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), `"hang"`) {
		t.Errorf("err = %v (phase %q), want a timeout in phase initialize naming the server", err, se.Phase)
	}
	if len(tools) != 5 || tools[0].Server.ID() != "ok" {
		t.Errorf("tools = %v, want the healthy server's 5", names(tools))
	}
	pl.waitStarts(t, 1, 5*time.Second)
	pl.allGone(t, closeBound)

	// The caller's ctx deadline is an upper bound too.
	hang.ConnectTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = bridge.Dial(ctx, hang, quiet())
	slack.Within(t, "Dial with a 500ms ctx deadline (and a 1 minute ConnectTimeout)", time.Since(start), 500*time.Millisecond)
	if se := asServerError(t, err); se.Phase != bridge.PhaseInitialize || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial err = %v", err)
	}
	pl.waitStarts(t, 2, 5*time.Second)
	pl.allGone(t, closeBound)
}

// 2-4. Legacy handshakes: go-sdk's server/discover probe must not cost a server its start. The
// bridge negotiates (discover first), falls back promptly, and reports how it got there; a
// pinned version skips discover altogether.
func TestChaosDiscoverHandshake(t *testing.T) {
	for _, tc := range []struct {
		mode, pin string
		how       string // substring of ServerStatus.Negotiation
		starts    int    // processes started by Dial
		discover  bool   // server/discover reaches the server
	}{
		{"exitdiscover", "", "closed the connection on server/discover", 2, true},
		{"ignorediscover", "", "initialize: no answer to server/discover after 2.5s (still starting", 1, true},
		{"errordiscover", "", "server/discover failed: method not found: server/discover (-32601)", 1, true},
		{"exitdiscover", "2025-11-25", "pinned by the server's protocolVersion", 1, false},
		{"ignorediscover", "2025-06-18", "pinned by the server's protocolVersion", 1, false},
	} {
		t.Run(tc.mode+"/"+cmp.Or(tc.pin, "negotiated"), func(t *testing.T) {
			pl := newProcLog(t)
			cfg := rawConfig(t, tc.mode, tc.mode, pl)
			cfg.ConnectTimeout = 10 * time.Second // discover waits a quarter: 2.5s
			cfg.ProtocolVersion = tc.pin
			start := time.Now()
			s := dialT(t, cfg, nil) // a discover that cost the whole timeout fails Dial
			elapsed := time.Since(start)
			t.Logf("Dial took %s", elapsed)
			slack.Within(t, "Dial of a legacy server", elapsed, 2500*time.Millisecond)
			st := s.Status()
			if want := cmp.Or(tc.pin, "2025-11-25"); st.ProtocolVersion != want || !strings.Contains(st.Negotiation, tc.how) {
				t.Errorf("protocol %q (%s), want %q (… %s …)", st.ProtocolVersion, st.Negotiation, want, tc.how)
			}
			if out, err := callText(ctxT(t, 10*time.Second), s, "work"); err != nil || out != "work 1" {
				t.Errorf("work = %q, %v", out, err)
			}
			if got := len(pl.starts()); got != tc.starts {
				t.Errorf("%d processes started, want %d", got, tc.starts)
			}
			if ev := pl.seen(); slices.Contains(ev, "discover") != tc.discover {
				t.Errorf("server/discover sent: %v, want %v (events %v)", !tc.discover, tc.discover, ev)
			}
		})
	}
}

// 5. A crashed server is redialled on the next call; concurrent callers share one redial.
func TestChaosCrashAfterNCalls(t *testing.T) {
	pl := newProcLog(t)
	cfg := rawConfig(t, "crashy", "basic", pl)
	cfg.Env[crashAfterEnv] = "3"
	s := dialT(t, cfg, nil)
	ctx := ctxT(t, 30*time.Second)
	pid1, err := callText(ctx, s, "pid")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if out, err := callText(ctx, s, "work"); err != nil || out != "work "+strconv.Itoa(i) {
			t.Fatalf("work #%d = %q, %v", i, out, err)
		}
	}
	// The third call's answer was the server's last word.
	p1, _ := strconv.Atoi(pid1)
	if !processGone(p1, 5*time.Second) {
		t.Fatalf("server %d did not exit after 3 calls", p1)
	}
	// "work" is not annotated retryable: the call must still work, because the dead
	// session is noticed before the request is sent.
	out, err := callText(ctx, s, "work")
	if err != nil || out != "work 1" {
		t.Fatalf("work after the crash = %q, %v; want a transparent redial", out, err)
	}
	pid2, err := callText(ctx, s, "pid")
	if err != nil || pid2 == pid1 {
		t.Fatalf("pid after redial = %q (before %q), %v", pid2, pid1, err)
	}
	if n := len(pl.starts()); n != 2 {
		t.Errorf("%d process starts, want 2", n)
	}

	// Crash again; 8 concurrent callers share one redial.
	for i := 2; i <= 3; i++ {
		if _, err := callText(ctx, s, "work"); err != nil {
			t.Fatal(err)
		}
	}
	p2, _ := strconv.Atoi(pid2)
	if !processGone(p2, 5*time.Second) {
		t.Fatalf("server %d did not exit after 3 calls", p2)
	}
	var wg sync.WaitGroup
	pids := make([]string, 8)
	errs := make([]error, 8)
	for i := range pids {
		wg.Go(func() { pids[i], errs[i] = callText(ctx, s, "pid") })
	}
	wg.Wait()
	for i := range pids {
		if errs[i] != nil || pids[i] != pids[0] || pids[i] == pid2 {
			t.Errorf("caller %d: pid %q, %v (first caller %q, old %q)", i, pids[i], errs[i], pids[0], pid2)
		}
	}
	if n := len(pl.starts()); n != 3 {
		t.Errorf("%d process starts after the concurrent redial, want 3", n)
	}
}

// 5b. A crash-looping server is not respawned in a hot loop: calls fail fast during backoff.
func TestChaosCrashLoopBackoff(t *testing.T) {
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "loop", "crashloop", pl), nil)
	ctx := ctxT(t, 30*time.Second)
	if _, err := callText(ctx, s, "exit"); err == nil || !strings.Contains(err.Error(), "may have run") {
		t.Fatalf("exit = %v, want an error saying the tool may have run", err)
	}
	// Call every 10ms for at least 1.5s, until a few calls failed fast (a slow machine
	// makes each redial outlast more of its backoff window), for at most 8s. Backoff
	// allows redials at about 0, 0.5, 1.5, 3.5 and 7.5s: at most 6 starts with the first.
	start := time.Now()
	calls, fast := 0, 0
	var last error
	for time.Since(start) < 8*time.Second && (time.Since(start) < 1500*time.Millisecond || fast < 3) {
		t0 := time.Now()
		_, err := callText(ctx, s, "pid")
		calls++
		if err == nil {
			t.Fatal("a call to a crash-looping server succeeded")
		}
		if d := time.Since(t0); d > 300*time.Millisecond {
			t.Logf("call %d took %s: %v", calls, d, err)
		}
		if strings.Contains(err.Error(), "next reconnect allowed in") {
			fast++
			// Failing fast is by construction (no redial is waited for); the schedule
			// itself is TestRedialBackoffSchedule, with fake time.
			slack.Within(t, "a call during backoff", time.Since(t0), 0)
			last = err
		}
		time.Sleep(10 * time.Millisecond)
	}
	starts := len(pl.starts())
	t.Logf("%d calls in %s: %d process starts, %d failed fast", calls, time.Since(start).Round(time.Millisecond), starts, fast)
	if starts > 6 {
		t.Errorf("%d process starts during %d calls: respawned in a hot loop", starts, calls)
	}
	if fast < 3 {
		t.Errorf("%d calls failed fast with a backoff error, want 3 or more", fast)
	} else if se := asServerError(t, last); se.Server != "loop" || se.Phase != bridge.PhaseCall || !strings.Contains(last.Error(), `"pid"`) {
		t.Errorf("backoff error = %v", last)
	}
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	pl.allGone(t, closeBound)
}

// 6. A server that ignores SIGTERM and stdin EOF: Close is bounded and kills it.
func TestChaosStubbornServerClose(t *testing.T) {
	t.Parallel()
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "stubborn", "stubborn", pl), nil)
	pid := pl.waitStarts(t, 1, 5*time.Second)[0].pid
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	elapsed := time.Since(start)
	t.Logf("Close of a stubborn server took %s", elapsed)
	slack.Within(t, "Close of a stubborn server", elapsed, closeSteps)
	if !processGone(pid, 100*time.Millisecond) {
		t.Errorf("stubborn server %d still exists after Close", pid)
	}
	pl.waitEvent(t, "stdin closed", time.Second)
}

// 7. The MCP server is a grandchild (sh -c): Close ends the shell and the grandchild.
func TestChaosGrandchildViaShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh -c process groups are unix only")
	}
	t.Parallel()
	pl := newProcLog(t)
	cfg := rawConfig(t, "sh", "lingering", pl)
	// A background job (sh gives async lists /dev/null as stdin, so the real stdin goes
	// through fd 3) and a shell that stays as its parent.
	cfg.Args = []string{"-c", `exec 3<&0; "$0" <&3 3<&- & wait`, cfg.Command}
	cfg.Command = "sh"
	s := dialT(t, cfg, nil)
	ctx := ctxT(t, 10*time.Second)
	out, err := callText(ctx, s, "pid")
	if err != nil {
		t.Fatal(err)
	}
	rec := pl.waitStarts(t, 1, 5*time.Second)[0]
	if strconv.Itoa(rec.pid) != out {
		t.Fatalf("pid tool = %s, spawn log %d", out, rec.pid)
	}
	if rec.ppid == os.Getpid() || !processExists(rec.ppid) {
		t.Fatalf("the server's parent %d is not a live shell", rec.ppid)
	}
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if !processGone(rec.pid, closeBound) {
		t.Errorf("grandchild %d still exists after Close", rec.pid)
	}
	if !processGone(rec.ppid, closeBound) {
		t.Errorf("shell %d still exists after Close", rec.ppid)
	}
}

// 8. 2 MiB of stderr at start: the server works; a failing one reports its stderr tail.
func TestChaosStderrFlood(t *testing.T) {
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "noisy", "stderrflood", pl), nil)
	if out, err := callText(ctxT(t, 10*time.Second), s, "work"); err != nil || out != "work 1" {
		t.Errorf("work = %q, %v", out, err)
	}
	cfg := rawConfig(t, "dying", "stderrfail", newProcLog(t))
	_, err := bridge.Dial(ctxT(t, 30*time.Second), cfg, quiet())
	se := asServerError(t, err)
	if se.Server != "dying" || se.Phase != bridge.PhaseInitialize {
		t.Errorf("err = %v, want phase initialize", err)
	}
	if !strings.HasSuffix(se.Stderr, "FATAL: cannot open the database\n") || len(se.Stderr) > 64<<10 {
		t.Errorf("Stderr tail (%d bytes) ends %q", len(se.Stderr), tail(se.Stderr, 80))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// 9. A response over the 16 MiB stdio frame cap fails clearly; the next call redials.
func TestChaosOversizedResponse(t *testing.T) {
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "huge", "basic", pl), nil)
	ctx := ctxT(t, 30*time.Second)
	pid1, err := callText(ctx, s, "pid")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = callText(ctx, s, "big")
	t.Logf("the oversized call failed after %s", time.Since(start))
	if err == nil || !strings.Contains(err.Error(), "maximum line length") || !strings.Contains(err.Error(), `"big"`) {
		t.Fatalf("big = %v, want an error about the frame limit naming the tool", err)
	}
	t.Logf("17 MiB response: %v", err)
	start = time.Now()
	pid2, err := callText(ctx, s, "pid")
	t.Logf("the next call took %s", time.Since(start))
	if err != nil || pid2 == pid1 {
		t.Fatalf("pid after the oversized response = %q (before %q), %v", pid2, pid1, err)
	}
	if out, err := callText(ctx, s, "work"); err != nil || out != "work 1" {
		t.Errorf("work = %q, %v", out, err)
	}
}

// 10. Cancelling a long call returns at once, the server's handler sees the cancellation,
// and the session stays usable.
func TestChaosCancelLongCall(t *testing.T) {
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "sdk", "sdk", pl), nil)
	ctx, cancel := context.WithCancel(ctxT(t, 30*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "sleep", nil)
		done <- err
	}()
	pl.waitEvent(t, "sleep started", 10*time.Second)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		slack.Within(t, "the cancelled call", time.Since(start), 0)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	pl.waitEvent(t, "sleep cancelled", 10*time.Second)
	out, err := callText(ctxT(t, 10*time.Second), s, "pid")
	if err != nil || out != strconv.Itoa(pl.starts()[0].pid) || len(pl.starts()) != 1 {
		t.Errorf("pid after cancel = %q, %v (starts %v): want the same session", out, err, pl.starts())
	}
}

// 10b. Options.CallTimeout bounds a call whose ctx has no deadline; the error names server
// and phase.
func TestChaosCallTimeout(t *testing.T) {
	pl := newProcLog(t)
	opts := quiet()
	opts.CallTimeout = 300 * time.Millisecond
	s := dialT(t, rawConfig(t, "slow", "basic", pl), opts)
	start := time.Now()
	_, err := s.CallTool(context.Background(), "hang", nil)
	slack.Within(t, "a call with a 300ms CallTimeout", time.Since(start), 300*time.Millisecond)
	se := asServerError(t, err)
	if se.Server != "slow" || se.Phase != bridge.PhaseCall || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `"hang"`) {
		t.Errorf("err = %v", err)
	}
	pl.waitEvent(t, "cancelled", 10*time.Second)
	if out, err := callText(ctxT(t, 10*time.Second), s, "work"); err != nil || out != "work 1" {
		t.Errorf("work after the timeout = %q, %v", out, err)
	}
}

// 11. Close while a call waits for a reply that never comes: both return promptly.
func TestChaosCloseWithCallInFlight(t *testing.T) {
	pl := newProcLog(t)
	s := dialT(t, rawConfig(t, "mute", "basic", pl), nil)
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), "hang", nil)
		done <- err
	}()
	pl.waitEvent(t, "call hang", 10*time.Second)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	slack.Within(t, "Close with a call in flight", time.Since(start), 0)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "server closed") {
			t.Errorf("in-flight call: %v, want a server closed error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the in-flight call did not return after Close")
	}
	pl.allGone(t, time.Second)
}

// 12. A Streamable HTTP server restarted mid-session: the old session ID gets 404 and the
// next call re-initializes transparently.
func TestChaosHTTPServerRestart(t *testing.T) {
	var gen atomic.Int64
	newHandler := func() http.Handler {
		n := gen.Add(1)
		srv := newChaosServer(func(string) {})
		srv.AddTool(&mcp.Tool{Name: "gen", Description: "Server generation.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("gen " + strconv.FormatInt(n, 10)), nil
			})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	}
	var current atomic.Pointer[http.Handler]
	h := newHandler()
	current.Store(&h)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*current.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s := dialT(t, bridge.ServerConfig{ID: "web", Type: "http", URL: ts.URL + "/mcp"}, nil)
	ctx := ctxT(t, 30*time.Second)
	if out, err := callText(ctx, s, "gen"); err != nil || out != "gen 1" {
		t.Fatalf("gen = %q, %v", out, err)
	}
	h2 := newHandler() // the restart: a new handler knows no old session
	current.Store(&h2)
	for i := range 2 {
		if out, err := callText(ctx, s, "gen"); err != nil || out != "gen 2" {
			t.Fatalf("gen after restart #%d = %q, %v; want a transparent re-initialize", i, out, err)
		}
	}
}

// 13. A tool that disappeared after a redial gives a clear error naming it.
func TestChaosToolGoneAfterRedial(t *testing.T) {
	pl := newProcLog(t)
	tools, err := connect(t, []bridge.ServerConfig{rawConfig(t, "v", "vanish", pl)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 30*time.Second)
	vanish := byName(t, tools, "vanish")
	if out, err := vanish.Handler(ctx, nil); err != nil || out != "still here" {
		t.Fatalf("vanish = %q, %v", out, err)
	}
	if _, err := byName(t, tools, "exit").Handler(ctx, nil); err == nil {
		t.Fatal("exit: want an error")
	}
	for range 2 { // the redial happens in the first call, the second finds the tool gone
		_, err = vanish.Handler(ctx, nil)
		if !errors.Is(err, bridge.ErrToolGone) || !strings.Contains(err.Error(), `"vanish"`) {
			t.Errorf("vanish after redial = %v, want an error naming the tool", err)
		}
	}
	if out, err := byName(t, tools, "work").Handler(ctx, nil); err != nil || out != "work 1" {
		t.Errorf("work = %q, %v", out, err)
	}
	if n := len(pl.starts()); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// 14. Tools.Close closes servers concurrently: N stubborn servers take one bound, not N.
func TestChaosToolsCloseConcurrently(t *testing.T) {
	t.Parallel()
	const n = 4
	pl := newProcLog(t)
	var cfgs []bridge.ServerConfig
	for i := range n {
		cfgs = append(cfgs, rawConfig(t, "s"+strconv.Itoa(i), "stubborn", pl))
	}
	opts := quiet()
	opts.AlwaysPrefix = true
	tools, err := connect(t, cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	pl.waitStarts(t, n, 5*time.Second)
	start := time.Now()
	if err := tools.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	elapsed := time.Since(start)
	t.Logf("Tools.Close of %d stubborn servers took %s", n, elapsed)
	slack.Within(t, "Tools.Close of servers that each take the whole close sequence (concurrent)", elapsed, closeSteps)
	pl.allGone(t, 100*time.Millisecond)
}

// A redial that hangs does not hold a caller past its own deadline, and Close ends it.
func TestChaosRedialHonoursCallerDeadline(t *testing.T) {
	pl := newProcLog(t)
	cfg := rawConfig(t, "slowstart", "hangrestart", pl)
	cfg.ConnectTimeout = 20 * time.Second
	s := dialT(t, cfg, nil)
	if _, err := callText(ctxT(t, 10*time.Second), s, "exit"); err == nil {
		t.Fatal("exit: want an error")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := callText(ctx, s, "pid")
	slack.Within(t, "a call during a hanging redial, with a 500ms deadline", time.Since(start), 500*time.Millisecond)
	if se := asServerError(t, err); se.Phase != bridge.PhaseCall || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	pl.waitStarts(t, 2, 5*time.Second)
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	d := time.Since(start)
	t.Logf("Close during a hanging redial took %s", d)
	slack.Within(t, "Close during a redial", d, closeSteps)
	pl.allGone(t, 100*time.Millisecond) // Close waited for the redial's process
}

// A Required server that hangs fails Connect within its timeout and closes the others.
func TestChaosRequiredServerHangs(t *testing.T) {
	pl, okLog := newProcLog(t), newProcLog(t)
	hang := rawConfig(t, "hang", "hang", pl)
	hang.ConnectTimeout = time.Second
	hang.Required = true
	start := time.Now()
	set, err := bridge.Connect(ctxT(t, 2*time.Minute), []bridge.ServerConfig{rawConfig(t, "ok", "basic", okLog), hang}, quiet())
	// Its timeout, then the teardown of the hanging process (stdin closed, a grace, SIGTERM).
	slack.Within(t, "Connect", time.Since(start), hang.ConnectTimeout+closeSteps)
	if set != nil || err == nil || !strings.Contains(err.Error(), `required mcp server "hang"`) || !strings.Contains(err.Error(), "initialize") {
		t.Fatalf("set %v, err %v", set, err)
	}
	okLog.waitStarts(t, 1, 5*time.Second)
	okLog.allGone(t, 0) // Connect closed the healthy server before returning
	pl.allGone(t, 0)    // and waited for the failed one's teardown
}

// A ctx that ends before assembly finished fails Connect, and every process it started is
// gone when it returns.
func TestConnectCtxEndedLeavesNothingRunning(t *testing.T) {
	pl, okLog := newProcLog(t), newProcLog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{rawConfig(t, "ok", "basic", okLog), rawConfig(t, "hang", "hang", pl)}, quiet())
	if set != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("set %v, err %v; want no set and the ctx's error", set, err)
	}
	okLog.waitStarts(t, 1, 5*time.Second)
	okLog.allGone(t, 0)
	pl.allGone(t, 0) // gone when Connect returned, not some time later
}
