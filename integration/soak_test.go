package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// soakFor is how long TestSoak calls: the short soak of every test run by default, the long
// one with `go test ./integration -run '^TestSoak$' -soak 10m -v -timeout 30m`.
var soakFor = flag.Duration("soak", 40*time.Second, "how long TestSoak calls (the long soak: -soak 10m)")

// The soak's shape.
const (
	soakStdio   = 16
	soakHTTP    = 16
	soakCallers = 64
	// soakCallBudget is each call's ctx deadline; a call must return by it (plus
	// soakGrace for the scheduler of a loaded 2-core machine under -race).
	soakCallBudget = 5 * time.Second
	soakGrace      = time.Second
	soakPeriod     = 10 * time.Second // calm for the first 6 s, faults for the last 4
	soakCalm       = 6 * time.Second
	// soakCalmKept bounds the latencies kept for p50/p99 (allocated up front, so that they
	// do not show in the heap samples).
	soakCalmKept = 1_000_000
)

// soakWorkSchema must equal testdata/soakserver's workSchema.
const soakWorkSchema = `{"type":"object","properties":{"id":{"type":"string"},"ms":{"type":"integer","minimum":0,"maximum":1000}},"required":["id"],"additionalProperties":false}`

// TestSoak runs 16 stdio and 16 Streamable HTTP servers, and 4 Streamable HTTP servers that
// need a login (internal/oauthtest, access tokens of 20 s) for 8 users whose grants live in
// bridge/redisstore on a real redis-server, and calls them 64 wide for -soak (a token server's
// calls for a user picked at random), while, in the last 4 s of every 10: stdio server
// processes are SIGKILLed at random (the bridge restarts them), HTTP servers are restarted
// (their sessions lost) and their traffic goes through a fault proxy (503s, connection resets
// before and after the server ran the call, stalls past the call's deadline, bodies trickled
// out), the redis-server is killed and started again on its address 1.5 s later (its data
// kept: append-only, fsync'd) or, every other window, pauses its clients for 1.5 s (CLIENT
// PAUSE), and meanwhile a token server forgets the access tokens it issued (so its users'
// calls need a refresh through the store that is out); all the while servers send
// tools/list_changed storms. It reports the calls made and their outcomes, and requires that
// every call returned by its deadline with a result or a typed error (a *bridge.ServerError,
// or bridge.ErrTokenStore while the store is out), that no call through a token server was
// told its user must log in again (*bridge.NeedsLoginError: the grants are fine), that no
// request carried another user's token, that no refresh token was spent twice, that no call
// ran twice on a server (the tool is not marked idempotent), and that Close leaves no process
// and no goroutine; heap and goroutines at start, middle and end, and p50/p99 latency of the
// calls made outside the fault windows, are reported.
func TestSoak(t *testing.T) {
	bin := goBuild(t, "soakserver")
	logDir := t.TempDir()
	baseGoroutines := runtime.NumGoroutine()
	baseKids, haveProc := childProcesses()
	var started atomic.Int64 // when the calls began (UnixNano); no faults before
	inFaults := func(at time.Time) bool {
		s := started.Load()
		return s != 0 && at.Sub(time.Unix(0, s))%soakPeriod >= soakCalm
	}

	ran := newRunCount()
	store := newSoakStore(t, ran)
	var cfgs []bridge.ServerConfig
	for i := range soakStdio {
		cfgs = append(cfgs, bridge.ServerConfig{ID: "stdio" + strconv.Itoa(i), Command: bin, Env: map[string]string{
			"SOAK_LOG": filepath.Join(logDir, strconv.Itoa(i)+".log"), "SOAK_STORM_EVERY": "7s"}})
	}
	var proxies []*faultProxy
	var servers []*httptest.Server
	for i := range soakHTTP {
		p := newFaultProxy("http"+strconv.Itoa(i), ran, inFaults)
		ts := httptest.NewServer(p)
		t.Cleanup(ts.Close)
		proxies, servers = append(proxies, p), append(servers, ts)
		cfgs = append(cfgs, bridge.ServerConfig{ID: "http" + strconv.Itoa(i), Type: bridge.TypeHTTP, URL: ts.URL + "/mcp"})
	}
	cfgs = append(cfgs, store.configs()...)

	ctx := testContext(t, *soakFor+5*time.Minute)
	opts := &bridge.Options{Logger: slog.New(slog.DiscardHandler), AlwaysPrefix: true,
		CallTimeout: 3 * time.Second, ConnectTimeout: 3 * time.Second}
	store.options(opts)
	set, err := bridge.Connect(ctx, cfgs, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = set.Close()
		}
	})
	if f := set.Failed(); len(f) > 0 {
		t.Fatalf("Connect skipped servers: %v", f)
	}
	if n := len(set.Tools()); n != len(cfgs) {
		t.Fatalf("%d tools, want one per server (%d)", n, len(cfgs))
	}
	if err := store.login(ctx, set); err != nil {
		t.Fatalf("logging the users in: %v", err)
	}

	var samples []memSample // at 10 %, 50 % and 90 % of the soak, under load
	start := time.Now()
	started.Store(start.UnixNano())
	end := start.Add(*soakFor)

	// The faults that are not per request: kills, restarts, storms.
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	var kills, restarts, storms atomic.Int64
	chaos.Go(func() {
		store.faults(stop, func(k int) time.Time { return start.Add(time.Duration(k)*soakPeriod + soakCalm) })
	})
	chaos.Go(func() {
		for _, at := range []struct {
			name string
			frac float64
		}{{"start", 0.1}, {"middle", 0.5}, {"end", 0.9}} {
			select {
			case <-stop:
				return
			case <-time.After(time.Until(start.Add(time.Duration(at.frac * float64(*soakFor))))):
				samples = append(samples, sampleMem(at.name))
			}
		}
	})
	chaos.Go(func() {
		tick := time.NewTicker(700 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				if inFaults(now) {
					if soakKillOne(bin) {
						kills.Add(1)
					}
					proxies[rand.IntN(len(proxies))].restart()
					restarts.Add(1)
				}
				if rand.IntN(4) == 0 {
					proxies[rand.IntN(len(proxies))].storm()
					storms.Add(1)
				}
			}
		}
	})

	var (
		stats   = soakStats{calm: make([]time.Duration, 0, soakCalmKept)} // allocated before the first heap sample
		next    atomic.Int64
		callers sync.WaitGroup
	)
	for range soakCallers {
		callers.Go(func() {
			for time.Now().Before(end) {
				tools := set.Tools()
				tool := tools[rand.IntN(len(tools))]
				if !strings.HasSuffix(tool.Name, "__work") {
					continue // an "extra" of a storm
				}
				id := "c" + strconv.FormatInt(next.Add(1), 10)
				args, _ := json.Marshal(map[string]any{"id": id, "ms": rand.IntN(20)})
				cctx, cancel := context.WithTimeout(context.Background(), soakCallBudget)
				token := isTokenTool(tool)
				if token {
					cctx, args = store.call(cctx, id, rand.IntN(20))
				}
				began := time.Now()
				text, err := tool.Handler(cctx, args)
				took := time.Since(began)
				cancel()
				stats.add(took, inFaults(began) || inFaults(began.Add(took)), token, id, text, err)
			}
		})
	}
	callers.Wait()
	close(stop)
	chaos.Wait()

	if err := set.Close(); err != nil {
		t.Errorf("Set.Close: %v", err)
	}
	closed = true
	spent, refreshes := store.doubleSpent()
	store.close() // the redis-server is a child process of the test

	// How often each call ran: the stdio servers' logs and the HTTP servers' counts.
	for i := range soakStdio {
		f, err := os.Open(filepath.Join(logDir, strconv.Itoa(i)+".log"))
		if err != nil {
			continue // never called
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			ran.add(sc.Text(), "stdio"+strconv.Itoa(i))
		}
		f.Close()
	}
	twice := ran.twice()

	s := &stats
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("soak of %s: %d calls (%d stdio, %d HTTP servers, %d token servers for %d users, %d wide); %d stdio kills, %d HTTP restarts, %d list_changed storms; redis-server %d restarts, %d pauses; %d token expiries",
		*soakFor, s.calls, soakStdio, soakHTTP, soakToken, soakUsers, soakCallers, kills.Load(), restarts.Load(), storms.Load(),
		store.restarts.Load(), store.pauses.Load(), store.expiries.Load())
	t.Logf("outcomes: %d results, %d typed errors %v (%d bridge.ErrTokenStore), %d other; %d returned after their deadline (latest %s past it)",
		s.ok, s.typed, s.phases, s.store, len(s.other), s.late, s.worstLate.Round(time.Millisecond))
	tok := &s.tok
	t.Logf("through token servers: %d calls: %d results, %d bridge.ErrTokenStore, %d *bridge.NeedsLoginError, other *bridge.ServerError %v; %d refreshes, %d refresh tokens spent twice, %d requests with another user's token",
		tok.calls, tok.ok, tok.store, tok.login, tok.server, refreshes, spent, store.wrong.Load())
	if n, last := goRedisLog.count(); n > 0 {
		t.Logf("go-redis logged %d lines, the last: %s", n, last)
	}
	t.Logf("calls run by servers: %d; run twice: %d", ran.total(), len(twice))
	p50, p99 := s.calmLatency()
	t.Logf("latency outside the fault windows (%d calls): p50 %s, p99 %s", len(s.calm), p50, p99)
	for _, m := range samples {
		t.Logf("%-6s heap %6.1f MiB, %4d goroutines", m.at, float64(m.heap)/(1<<20), m.goroutines)
	}
	if len(samples) == 3 {
		mins := 0.8 * soakFor.Minutes()
		t.Logf("slope from start to end: heap %+.2f MiB/min, goroutines %+.1f/min",
			float64(int64(samples[2].heap)-int64(samples[0].heap))/(1<<20)/mins, float64(samples[2].goroutines-samples[0].goroutines)/mins)
	}

	if s.calls == 0 || s.ok == 0 {
		t.Errorf("%d calls, %d with a result", s.calls, s.ok)
	}
	if s.late > 0 {
		t.Errorf("%d calls returned after their deadline of %s (+%s), the latest %s past it", s.late, soakCallBudget, soakGrace, s.worstLate)
	}
	if len(s.other) > 0 {
		t.Errorf("%d calls ended with neither a result nor a typed error, e.g. %q", len(s.other), s.other[:min(5, len(s.other))])
	}
	if len(twice) > 0 {
		t.Errorf("%d calls ran twice on a server, e.g. %v", len(twice), twice[:min(5, len(twice))])
	}
	if tok.calls == 0 || tok.ok == 0 {
		t.Errorf("%d calls through token servers, %d with a result", tok.calls, tok.ok)
	}
	if tok.login > 0 {
		t.Errorf("%d calls through token servers were told their user must log in again (the grants are fine), e.g. %q", tok.login, tok.loginErrs)
	}
	if spent > 0 {
		t.Errorf("%d refresh tokens were spent twice", spent)
	}
	if w := store.wrong.Load(); w > 0 {
		t.Errorf("%d requests carried another user's token (or none)", w)
	}
	if store.restarts.Load() == 0 {
		t.Error("the redis-server was never restarted")
	}
	for _, err := range store.faultErrs {
		t.Errorf("a store fault: %v", err)
	}
	if haveProc {
		if left := waitChildren(baseKids, 15*time.Second); len(left) > 0 {
			t.Errorf("processes left after Close: %v", left)
		}
	}
	for i, p := range proxies {
		p.close()
		servers[i].Close() // the servers' goroutines are not the bridge's
	}
	if n := waitGoroutines(baseGoroutines+5, 20*time.Second); n > baseGoroutines+5 {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Errorf("%d goroutines 20 s after Close, %d before Connect:\n%s", n, baseGoroutines, b.String())
	}
}

// soakKillOne SIGKILLs one of this process's soakserver children at random (the bridge
// restarts it on the next call) and reports whether there was one.
func soakKillOne(bin string) bool {
	kids, ok := childProcesses()
	if !ok {
		return false
	}
	var pids []int
	for pid, what := range kids {
		if strings.Contains(what, filepath.Base(bin)) && !strings.HasPrefix(what, "Z") {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return false
	}
	proc, err := os.FindProcess(pids[rand.IntN(len(pids))])
	if err != nil {
		return false
	}
	defer proc.Release()
	return proc.Kill() == nil // SIGKILL
}

// soakStats are the outcomes of the soak's calls.
type soakStats struct {
	mu        sync.Mutex
	calls     int
	ok, typed int
	phases    map[bridge.Phase]int
	store     int        // typed errors that are bridge.ErrTokenStore
	tok       tokenStats // the calls through token servers
	other     []string
	late      int
	worstLate time.Duration
	calm      []time.Duration // latencies of calls made outside the fault windows
}

func (s *soakStats) add(took time.Duration, faulty, token bool, id, text string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if over := took - soakCallBudget - soakGrace; over > 0 {
		s.late++
		s.worstLate = max(s.worstLate, over)
	}
	var se *bridge.ServerError
	var te *results.ToolError
	if token {
		s.tok.add(err, err == nil && text == "done "+id)
	}
	switch {
	case err == nil && text == "done "+id:
		s.ok++
		if !faulty && len(s.calm) < soakCalmKept {
			s.calm = append(s.calm, took)
		}
	case err == nil:
		s.other = append(s.other, "result "+strconv.Quote(text))
	case errors.Is(err, bridge.ErrTokenStore):
		s.typed++
		s.store++
	case errors.As(err, &se):
		s.typed++
		if s.phases == nil {
			s.phases = map[bridge.Phase]int{}
		}
		s.phases[se.Phase]++
	case errors.As(err, &te):
		s.other = append(s.other, "tool error "+err.Error())
	default:
		s.other = append(s.other, fmt.Sprintf("%T %v", err, err))
	}
}

// calmLatency returns the p50 and p99 of the calls made outside the fault windows.
func (s *soakStats) calmLatency() (p50, p99 time.Duration) {
	if len(s.calm) == 0 {
		return 0, 0
	}
	l := slices.Clone(s.calm)
	slices.Sort(l)
	return l[len(l)/2].Round(10 * time.Microsecond), l[len(l)*99/100].Round(10 * time.Microsecond)
}

// memSample is the heap and goroutines at one moment of the soak.
type memSample struct {
	at         string
	heap       uint64
	goroutines int
}

func sampleMem(at string) memSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{at: at, heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine()}
}

// runCount counts how often servers ran each call ID, and which servers did. Its records
// take two bytes per call, allocated up front for the first million calls, so that the heap
// the soak samples is the bridge's and not a record that grows with every call (two maps of
// strings per call added about 5 MiB a minute to a 10-minute soak's samples).
type runCount struct {
	mu     sync.Mutex
	n      []uint8           // index: the call's number (its ID is "c" and the number)
	first  []uint8           // the first server that ran it, an index into names
	names  []string          // the servers, in the order they first ran a call
	extra  map[int]string    // calls run more than once: the further servers, comma-separated
	odd    map[string]string // IDs not of the form "c" and a number (none expected): their servers
	oddRun map[string]int
}

func newRunCount() *runCount {
	return &runCount{n: make([]uint8, 0, 1<<20), first: make([]uint8, 0, 1<<20)}
}

// add records that the server named server ran the call id.
func (r *runCount) add(id, server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, err := strconv.Atoi(strings.TrimPrefix(id, "c"))
	if err != nil || k < 0 || !strings.HasPrefix(id, "c") || k > 1<<26 {
		if r.odd == nil {
			r.odd, r.oddRun = map[string]string{}, map[string]int{}
		}
		r.oddRun[id]++
		r.odd[id] += server + ","
		return
	}
	for len(r.n) <= k {
		r.n, r.first = append(r.n, 0), append(r.first, 0)
	}
	if r.n[k] == 0 {
		i := slices.Index(r.names, server)
		if i < 0 {
			i = len(r.names)
			r.names = append(r.names, server)
		}
		r.first[k] = uint8(i)
	} else {
		if r.extra == nil {
			r.extra = map[int]string{}
		}
		r.extra[k] += "," + server
	}
	if r.n[k] < 255 {
		r.n[k]++
	}
}

func (r *runCount) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	total := 0
	for _, n := range r.n {
		total += int(n)
	}
	for _, n := range r.oddRun {
		total += n
	}
	return total
}

func (r *runCount) twice() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for k, n := range r.n {
		if n > 1 {
			ids = append(ids, "c"+strconv.Itoa(k)+"×"+strconv.Itoa(int(n))+" ("+r.names[r.first[k]]+r.extra[k]+")")
		}
	}
	for id, n := range r.oddRun {
		if n > 1 {
			ids = append(ids, id+"×"+strconv.Itoa(n)+" ("+strings.TrimSuffix(r.odd[id], ",")+")")
		}
	}
	slices.Sort(ids)
	return ids
}

// faultProxy is one HTTP server of the soak: a go-sdk server behind a handler that, while
// inFaults says so, answers some requests with a fault instead. restart replaces the go-sdk
// server (and its sessions) with a new one.
type faultProxy struct {
	name     string // the server's ID
	ran      *runCount
	inFaults func(time.Time) bool
	mu       sync.Mutex // guards srv and h
	srv      *mcp.Server
	h        http.Handler
	stalls   sync.WaitGroup
	done     chan struct{}
}

func newFaultProxy(name string, ran *runCount, inFaults func(time.Time) bool) *faultProxy {
	p := &faultProxy{name: name, ran: ran, inFaults: inFaults, done: make(chan struct{})}
	p.restart()
	return p
}

func (p *faultProxy) restart() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "soak", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	srv.AddTool(&mcp.Tool{Name: "work", Description: "Does a unit of work.", InputSchema: json.RawMessage(soakWorkSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				ID string `json:"id"`
				MS int    `json:"ms"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			p.ran.add(in.ID, p.name)
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + in.ID}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)})
	p.mu.Lock()
	old := p.srv
	p.srv, p.h = srv, h
	p.mu.Unlock()
	closeSessions(old) // a restarted server has forgotten its sessions
}

// closeSessions closes srv's sessions (nil: none).
func closeSessions(srv *mcp.Server) {
	if srv == nil {
		return
	}
	for ss := range srv.Sessions() {
		_ = ss.Close()
	}
}

// storm adds and removes a tool ten times: ten tools/list_changed notifications.
func (p *faultProxy) storm() {
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	for range 10 {
		srv.AddTool(&mcp.Tool{Name: "extra", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		srv.RemoveTools("extra")
	}
}

// close ends the stalls in progress and the server's sessions.
func (p *faultProxy) close() {
	close(p.done)
	p.stalls.Wait()
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	closeSessions(srv)
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	h := p.h
	p.mu.Unlock()
	if !p.inFaults(time.Now()) {
		h.ServeHTTP(w, r)
		return
	}
	switch n := rand.IntN(100); {
	case n < 15:
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	case n < 25:
		reset(w) // before the server saw the request
	case n < 32:
		// A stall past any call's deadline, then a reset.
		p.stalls.Add(1)
		defer p.stalls.Done()
		select {
		case <-r.Context().Done():
		case <-p.done:
		case <-time.After(soakCallBudget + time.Second):
		}
		reset(w)
	case n < 40:
		h.ServeHTTP(&trickle{ResponseWriter: w}, r)
	case n < 45 && r.Method == http.MethodPost:
		// The server runs the request, its answer is lost with the connection.
		h.ServeHTTP(&discard{header: http.Header{}}, r)
		reset(w)
	default:
		h.ServeHTTP(w, r)
	}
}

// reset closes the request's connection with a TCP reset.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// trickle writes a response a few bytes at a time.
type trickle struct{ http.ResponseWriter }

func (t *trickle) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), 64)
		m, err := t.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		time.Sleep(2 * time.Millisecond)
		b = b[k:]
	}
	return n, nil
}

func (t *trickle) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return io.Discard.Write(b) }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}
