package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
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
)

// A host with hundreds of servers (issue 37): BenchmarkScale.

// scaleSizes are the numbers of Streamable HTTP endpoints assembled, of each kind;
// scaleStdioSizes the numbers of stdio servers.
var (
	scaleSizes      = []int{10, 100, 1000}
	scaleStdioSizes = []int{10, 100}
)

const (
	// scaleProcesses is how many scaleserver processes serve the endpoints of each kind
	// (each endpoint a go-sdk server of its own on the process's one port, /mcp/<i>).
	scaleProcesses = 4
	// scalePer is the number of the sweep's tools each endpoint offers besides add: a
	// thousand endpoints offer 10,000 tools.
	scalePer = 9
	// scaleChurnServers, scaleChurnCalls and scaleChurnCallers shape the churn run: calls
	// of add over that many servers (half stateless, half stateful), from that many
	// goroutines, first calm, then while servers are closed and dialled again.
	scaleChurnServers = 100
	scaleChurnCalls   = 5_000
	scaleChurnCallers = 16
)

// scaleKind is one kind of server the benchmark assembles.
type scaleKind struct {
	name     string // metric prefix
	protocol string // the protocol version every server must end up on
	sizes    []int
	cfgs     func(n int) []bridge.ServerConfig
	raw      func(ctx context.Context, cfg bridge.ServerConfig) (*mcp.ClientSession, error)
}

// BenchmarkScale assembles 10, 100 and 1,000 Streamable HTTP endpoints (stateless
// 2026-07-28 and stateful 2025-11-25 sessions, several endpoints per server process,
// testdata/scaleserver) and 10 and 100 stdio servers (the same program), each offering add
// and 9 of the sweep's tools, with bridge.Connect and with raw go-sdk (mcp.Client.Connect
// and a full tools/list per server, all concurrently, the lists kept), and reports per
// server: time to assemble, heap (after GC, once the set settled), goroutines and file
// descriptors (Linux; 0 elsewhere), and for each the slope of the per-server figure from
// the smallest size to the largest (least squares, per 1,000 servers: flat is 0), and how
// many servers the bridge left on another protocol than their kind's (a server/discover
// unanswered for a quarter of the connect timeout falls back to initialize). Raw go-sdk
// opens no subscriptions/listen stream (it does for a client with a
// ToolListChangedHandler); the bridge opens one per 2026-07-28 server. A server the bridge
// skips is counted, not fatal. Then
// calls of add over 100 servers from 16 goroutines, calm and while one server after
// another is closed and dialled again (churn), and the p99 of one Set.Search's CPU time
// over the 10,000 tools of the 1,000 stateless endpoints. Every figure is a metric; one
// op measures everything once (`-benchtime 1x`: 50–75 s on 2 cores, more on a busy
// machine, most of it the two assemblies of 1,000 endpoints).
func BenchmarkScale(b *testing.B) {
	ctx := benchContext(b)
	bin := goBuild(b, "scaleserver")
	tools, err := filepath.Abs(sweepToolsFile)
	if err != nil {
		b.Fatal(err)
	}
	largest := slices.Max(scaleSizes)
	bases := map[bool][]string{}
	for _, stateless := range []bool{true, false} {
		for p := range scaleProcesses {
			bases[stateless] = append(bases[stateless], scaleHTTPProcess(b, bin, tools, stateless, p*largest/scaleProcesses, largest/scaleProcesses))
		}
	}
	// endpoint i is served by process i % scaleProcesses, so that every size spreads
	// over every process.
	httpCfgs := func(stateless bool, prefix string) func(n int) []bridge.ServerConfig {
		return func(n int) []bridge.ServerConfig {
			cfgs := make([]bridge.ServerConfig, n)
			per := largest / scaleProcesses
			for i := range cfgs {
				p, k := i%scaleProcesses, i/scaleProcesses
				idx := p*per + k
				cfgs[i] = bridge.ServerConfig{ID: prefix + strconv.Itoa(idx), Type: bridge.TypeHTTP, URL: bases[stateless][p] + strconv.Itoa(idx)}
			}
			return cfgs
		}
	}
	// Raw go-sdk sessions share one HTTP client, as a host's would (go-sdk's default is
	// http.DefaultClient); its idle connections are released after each run, so that the
	// file descriptors counted are the run's.
	rawTransport := http.DefaultTransport.(*http.Transport).Clone()
	rawClient := &http.Client{Transport: rawTransport}
	b.Cleanup(rawTransport.CloseIdleConnections)
	rawHTTP := func(ctx context.Context, cfg bridge.ServerConfig) (*mcp.ClientSession, error) {
		return newRawClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: rawClient}, nil)
	}
	kinds := []scaleKind{
		{name: "stateless", protocol: "2026-07-28", sizes: scaleSizes, cfgs: httpCfgs(true, "l"), raw: rawHTTP},
		{name: "stateful", protocol: "2025-11-25", sizes: scaleSizes, cfgs: httpCfgs(false, "f"), raw: rawHTTP},
		{name: "stdio", protocol: "2026-07-28", sizes: scaleStdioSizes, cfgs: func(n int) []bridge.ServerConfig {
			cfgs := make([]bridge.ServerConfig, n)
			for i := range cfgs {
				cfgs[i] = benchStdio("p"+strconv.Itoa(i), bin, "-tools", tools, "-per", strconv.Itoa(scalePer), "-index", strconv.Itoa(i))
			}
			return cfgs
		}, raw: func(ctx context.Context, cfg bridge.ServerConfig) (*mcp.ClientSession, error) {
			return rawStdio(ctx, cfg.Command, "", cfg.Args...)
		}},
	}
	type sample struct{ bridge, raw scaleCost }
	all := map[string][]sample{}
	var search scaleSearch
	var churn scaleChurn
	b.ResetTimer()
	for b.Loop() {
		for _, k := range kinds {
			for _, n := range k.sizes {
				cfgs := k.cfgs(n)
				var inspect func(*bridge.Set)
				if k.name == "stateless" && n == largest {
					inspect = func(set *bridge.Set) { search = measureSearch(b, set) }
				}
				br := measureBridgeScale(ctx, b, k, cfgs, inspect)
				raw := measureRawScale(ctx, b, k, cfgs, rawTransport.CloseIdleConnections)
				all[k.name] = append(all[k.name], sample{br, raw})
			}
		}
		churn = measureChurn(ctx, b, append(httpCfgs(true, "l")(scaleChurnServers/2), httpCfgs(false, "f")(scaleChurnServers/2)...))
	}
	b.StopTimer()

	iters := float64(b.N)
	for _, k := range kinds {
		samples := all[k.name]
		for i, n := range k.sizes {
			var br, raw scaleCost
			for j := i; j < len(samples); j += len(k.sizes) { // b.N rounds of every size
				br.add(samples[j].bridge)
				raw.add(samples[j].raw)
			}
			pre := fmt.Sprintf("%s-%d-", k.name, n)
			for _, m := range br.perServer(n, iters) {
				b.ReportMetric(m.v, pre+m.unit)
			}
			for _, m := range raw.perServer(n, iters) {
				b.ReportMetric(m.v, pre+"raw-"+m.unit)
			}
			b.ReportMetric(float64(br.otherProtocol)/iters, pre+"other-protocol")
			b.ReportMetric(float64(br.skipped)/iters, pre+"skipped")
			if rh := raw.heap; rh > 0 {
				b.ReportMetric(float64(br.heap)/float64(rh), pre+"heap-bridge/raw")
			}
		}
		// The slope of each per-server figure over the sizes (per 1,000 servers).
		xs := make([]float64, len(k.sizes))
		for i, n := range k.sizes {
			xs[i] = float64(n)
		}
		for u, unit := range scaleUnits {
			for _, side := range []string{"", "raw-"} {
				ys := make([]float64, len(k.sizes))
				for i, n := range k.sizes {
					var c scaleCost
					for j := i; j < len(samples); j += len(k.sizes) {
						if side == "" {
							c.add(samples[j].bridge)
						} else {
							c.add(samples[j].raw)
						}
					}
					ys[i] = c.perServer(n, iters)[u].v
				}
				slope, _ := fitLine(xs, ys)
				b.ReportMetric(1000*slope, k.name+"-"+side+"slope-"+unit+"-per-1k")
			}
		}
	}
	b.ReportMetric(scaleChurnServers, "churn-servers")
	b.ReportMetric(scaleChurnCalls, "churn-calls")
	b.ReportMetric(churn.calm, "churn-calm-calls/s")
	b.ReportMetric(churn.churn, "churn-calls/s")
	b.ReportMetric(churn.redials, "churn-redials")
	b.ReportMetric(churn.redialRate, "churn-redials/s")
	b.ReportMetric(churn.churn/churn.calm, "churn/calm")
	b.ReportMetric(float64(search.tools), "search-tools")
	b.ReportMetric(float64(search.queries), "search-queries")
	b.ReportMetric(float64(search.p50.Nanoseconds()), "search-p50-cpu-ns")
	b.ReportMetric(float64(search.p99.Nanoseconds()), "search-p99-cpu-ns")
	b.ReportMetric(float64(search.index.Nanoseconds()), "search-index-ns")
}

// scaleHTTPProcess starts scaleserver serving count endpoints from first on, and returns
// the base URL (endpoint i is base + i). The process ends at cleanup.
func scaleHTTPProcess(b *testing.B, bin, tools string, stateless bool, first, count int) string {
	b.Helper()
	args := []string{"-http", "-tools", tools, "-per", strconv.Itoa(scalePer), "-first", strconv.Itoa(first), "-endpoints", strconv.Itoa(count)}
	if stateless {
		args = append(args, "-stateless")
	}
	_, stdout := startPiped(b, exec.Command(bin, args...))
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("scaleserver -http: %v", err)
	}
	return strings.TrimSpace(line)
}

// scaleCost is what n servers cost together: time to assemble, and heap, goroutines and
// file descriptors held once assembled.
type scaleCost struct {
	connect               time.Duration
	heap, goroutines, fds int64
	// otherProtocol counts the servers that ended up on another protocol version than
	// their kind's (the bridge falls back to initialize when server/discover goes
	// unanswered for a quarter of the connect timeout).
	otherProtocol int64
	// skipped counts the servers the bridge skipped (Set.Failed).
	skipped int64
}

func (c *scaleCost) add(o scaleCost) {
	c.connect += o.connect
	c.heap += o.heap
	c.goroutines += o.goroutines
	c.fds += o.fds
	c.otherProtocol += o.otherProtocol
	c.skipped += o.skipped
}

// scaleUnits are the units of perServer's figures, in its order.
var scaleUnits = []string{"connect-µs/server", "heap-KiB/server", "goroutines/server", "fds/server"}

type metric struct {
	v    float64
	unit string
}

// perServer is c (the sum of iters rounds of n servers) per server and round.
func (c scaleCost) perServer(n int, iters float64) []metric {
	d := float64(n) * iters
	return []metric{
		{float64(c.connect.Microseconds()) / d, scaleUnits[0]},
		{float64(c.heap) / 1024 / d, scaleUnits[1]},
		{float64(c.goroutines) / d, scaleUnits[2]},
		{float64(c.fds) / d, scaleUnits[3]},
	}
}

// scaleBaseline is the process's state before something is opened.
type scaleBaseline struct {
	goroutines int
	heap       int64
	fds        int
}

func scaleBase() scaleBaseline {
	h := heapAfterGC()
	return scaleBaseline{goroutines: runtime.NumGoroutine(), heap: h, fds: openFDs()}
}

// held measures what is held over base once the process settled.
func (base scaleBaseline) held(connect time.Duration) scaleCost {
	settle(20 * time.Second)
	c := scaleCost{connect: connect, heap: heapAfterGC() - base.heap, goroutines: int64(runtime.NumGoroutine() - base.goroutines)}
	if base.fds >= 0 {
		c.fds = int64(openFDs() - base.fds)
	}
	return c
}

// closed waits until the goroutines and file descriptors of what was opened over base
// are gone, failing after 30 s.
func (base scaleBaseline) closed(b *testing.B, what string) {
	if n := waitGoroutines(base.goroutines, 30*time.Second); n > base.goroutines {
		b.Fatalf("%s: %d goroutines running 30 s after close, %d before", what, n, base.goroutines)
	}
	if base.fds < 0 {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for openFDs() > base.fds {
		if time.Now().After(deadline) {
			b.Fatalf("%s: %d file descriptors open 30 s after close, %d before", what, openFDs(), base.fds)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// measureBridgeScale assembles cfgs with bridge.Connect (AlwaysPrefix: a host with many
// servers prefixes every tool), measures, calls inspect (if set) on the set, and closes.
func measureBridgeScale(ctx context.Context, b *testing.B, k scaleKind, cfgs []bridge.ServerConfig, inspect func(*bridge.Set)) scaleCost {
	base := scaleBase()
	opts := benchOptions()
	opts.AlwaysPrefix = true
	start := time.Now()
	set, err := bridge.Connect(ctx, cfgs, opts)
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%s, %d servers: %v", k.name, len(cfgs), err)
	}
	failed := set.Failed()
	if len(failed) > 0 { // counted (a loaded machine may time some out), not fatal
		b.Logf("bridge, %s, %d servers: %d skipped, the first: %v", k.name, len(cfgs), len(failed), failed[0])
	}
	if got, want := len(set.Tools()), (len(cfgs)-len(failed))*(1+scalePer); got != want {
		_ = set.Close()
		b.Fatalf("%s, %d servers: %d tools, want %d", k.name, len(cfgs), got, want)
	}
	other := 0
	for _, s := range set.Servers() {
		if s.Status().ProtocolVersion != k.protocol {
			other++
		}
	}
	c := base.held(took)
	c.otherProtocol, c.skipped = int64(other), int64(len(failed))
	if other > 0 {
		b.Logf("bridge, %s, %d servers: %d on another protocol than %s", k.name, len(cfgs), other, k.protocol)
	}
	if inspect != nil {
		inspect(set)
	}
	if err := set.Close(); err != nil {
		b.Errorf("%s: Set.Close: %v", k.name, err)
	}
	base.closed(b, fmt.Sprintf("bridge, %s, %d servers", k.name, len(cfgs)))
	return c
}

// measureRawScale connects a raw go-sdk session to each of cfgs, all at once, each listing
// every tool (kept), measures, and closes them; release frees what their HTTP client keeps.
func measureRawScale(ctx context.Context, b *testing.B, k scaleKind, cfgs []bridge.ServerConfig, release func()) scaleCost {
	base := scaleBase()
	type held struct {
		cs    *mcp.ClientSession
		tools []*mcp.Tool
		err   error
	}
	all := make([]held, len(cfgs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, cfg := range cfgs {
		wg.Go(func() {
			h := &all[i]
			if h.cs, h.err = k.raw(ctx, cfg); h.err != nil {
				return
			}
			for t, err := range h.cs.Tools(ctx, nil) {
				if err != nil {
					h.err = err
					return
				}
				h.tools = append(h.tools, t)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	closeAll := func() {
		var cw sync.WaitGroup
		for _, h := range all {
			if h.cs != nil {
				cw.Go(func() { _ = h.cs.Close() })
			}
		}
		cw.Wait()
		release()
	}
	for _, h := range all {
		if h.err == nil && len(h.tools) != 1+scalePer {
			h.err = fmt.Errorf("listed %d tools, want %d", len(h.tools), 1+scalePer)
		}
		if h.err == nil && h.cs.InitializeResult().ProtocolVersion != k.protocol {
			h.err = fmt.Errorf("negotiated %q, want %q", h.cs.InitializeResult().ProtocolVersion, k.protocol)
		}
		if h.err != nil {
			closeAll()
			b.Fatalf("raw go-sdk, %s, %d servers: %v", k.name, len(cfgs), h.err)
		}
	}
	c := base.held(took)
	runtime.KeepAlive(all)
	closeAll()
	base.closed(b, fmt.Sprintf("raw go-sdk, %s, %d servers", k.name, len(cfgs)))
	return c
}

// scaleChurn is the churn run's outcome: calls/s calm and during churn, and the servers
// closed and dialled again meanwhile.
type scaleChurn struct {
	calm, churn, redials, redialRate float64
}

// measureChurn dials each of cfgs (bridge.Dial, one Server each), then makes
// scaleChurnCalls calls of add round robin over them from scaleChurnCallers goroutines,
// first calm, then while a goroutine closes one server after another (at random) and
// dials it again. A call holds its server's slot (read lock) for the call, so a server is
// closed only once the calls on it are done: no call may fail.
func measureChurn(ctx context.Context, b *testing.B, cfgs []bridge.ServerConfig) scaleChurn {
	type slot struct {
		mu   sync.RWMutex
		s    *bridge.Server
		call callTool
	}
	dial := func(cfg bridge.ServerConfig) (*bridge.Server, callTool) {
		s, err := bridge.Dial(ctx, cfg, benchOptions())
		if err != nil {
			b.Fatalf("churn: dial %s: %v", cfg.ID, err)
		}
		return s, handlerCall(benchTool(b, s.Tools(), cfg.ID, "add").Handler)
	}
	slots := make([]*slot, len(cfgs))
	for i, cfg := range cfgs {
		s, call := dial(cfg)
		slots[i] = &slot{s: s, call: call}
	}
	defer func() {
		for _, sl := range slots {
			_ = sl.s.Close()
		}
	}()
	run := func() float64 {
		var next atomic.Int64
		start := time.Now()
		err := runConcurrent(ctx, scaleChurnCalls, scaleChurnCallers, func(ctx context.Context) error {
			sl := slots[int(next.Add(1))%len(slots)]
			sl.mu.RLock()
			defer sl.mu.RUnlock()
			return sl.call(ctx)
		})
		if err != nil {
			b.Fatalf("churn: %v", err)
		}
		return scaleChurnCalls / time.Since(start).Seconds()
	}
	var out scaleChurn
	out.calm = run()
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			i := rng.IntN(len(slots))
			s, call := dial(cfgs[i])
			sl := slots[i]
			sl.mu.Lock()
			old := sl.s
			sl.s, sl.call = s, call
			sl.mu.Unlock()
			_ = old.Close()
			n++
		}
	}()
	start := time.Now()
	out.churn = run()
	close(stop)
	n := <-done
	out.redials = float64(n)
	out.redialRate = float64(n) / time.Since(start).Seconds()
	return out
}

// scaleSearch is the search figures over the stateless set's tools.
type scaleSearch struct {
	tools, queries int
	p50, p99       time.Duration
	index          time.Duration
}

// measureSearch builds set's search index (timed) and times each query of the tuning
// sets once (the top 10), in thread CPU time (Linux; wall time elsewhere).
func measureSearch(b *testing.B, set *bridge.Set) scaleSearch {
	var qs []string
	for _, f := range []string{"queries.json", "queries-heldout.json"} {
		data, err := os.ReadFile(filepath.Join("..", "bridge", "toolsearch", "testdata", f))
		if err != nil {
			b.Fatal(err)
		}
		var doc struct {
			Queries []struct {
				Query string `json:"query"`
			} `json:"queries"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		for _, q := range doc.Queries {
			qs = append(qs, q.Query)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	set.Search("", 1) // builds the index
	out := scaleSearch{tools: len(set.Tools()), queries: len(qs), index: threadCPU() - start}
	took := make([]time.Duration, len(qs))
	for i, q := range qs {
		start := threadCPU()
		if len(set.Search(q, 10)) == 0 {
			b.Fatalf("search %q: no hits", q)
		}
		took[i] = threadCPU() - start
	}
	slices.Sort(took)
	out.p50, out.p99 = took[len(took)/2], took[len(took)*99/100]
	return out
}

// fitLine is the least-squares line through (xs[i], ys[i]): y = slope*x + intercept. With
// fewer than two distinct xs the slope is 0 and the intercept the mean of ys.
func fitLine(xs, ys []float64) (slope, intercept float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for i := range xs {
		dx := xs[i] - mx
		sxx += dx * dx
		sxy += dx * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, my
	}
	slope = sxy / sxx
	return slope, my - slope*mx
}
