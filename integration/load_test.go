package integration

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// loadCalls is the number of calls made against each of the stdio and the HTTP server, and
// loadCallers the number of goroutines they are spread over. The count is the same with and
// without -race: on the 2-core machine the whole test took about 15 s, and 48 s under -race
// (stdio 9 s, Streamable HTTP 35 s: go-sdk's streamable client and server, both in this
// process and both instrumented, manage about 300 calls/s under -race).
const (
	loadCalls   = 10_000
	loadCallers = 32
)

// TestLoad is the load test of issue 7: 16 servers assembled at once (8 stdio processes and
// 8 in-process servers) and called concurrently; then 10,000 calls over 32 goroutines against
// one stdio server and 10,000 against one Streamable HTTP server. No call may fail, and after
// everything is closed the goroutine count must be back at its baseline and no child process
// (running or zombie) may be left.
func TestLoad(t *testing.T) {
	bin := buildBenchServer(t)
	baseGoroutines := runtime.NumGoroutine()
	baseKids, haveProc := childProcesses()

	t.Run("16 servers at once", func(t *testing.T) {
		ctx := testContext(t, testTimeout)
		var cfgs []bridge.ServerConfig
		for i := range 8 {
			cfgs = append(cfgs,
				benchStdio("stdio"+strconv.Itoa(i), bin),
				benchInProcess("mem"+strconv.Itoa(i), newBenchServer(0), 0))
		}
		start := time.Now()
		opts := benchOptions() // AlwaysPrefix would log one rename warning per tool; errors are returned
		opts.AlwaysPrefix = true
		set, err := bridge.Connect(ctx, cfgs, opts)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(func() {
			if err := set.Close(); err != nil {
				t.Errorf("Set.Close: %v", err)
			}
		})
		if f := set.Failed(); len(f) > 0 {
			t.Fatalf("Connect skipped servers: %v", f)
		}
		tools := set.Tools()
		t.Logf("Connect of %d servers took %v", len(cfgs), time.Since(start))
		if len(tools) != len(cfgs) {
			t.Fatalf("got %d tools, want one per server (%d)", len(tools), len(cfgs))
		}
		for i, tool := range tools {
			if want := cfgs[i].ID + "__add"; tool.Name != want || tool.Server.ID() != cfgs[i].ID {
				t.Errorf("tool %d = %s of %s, want %s (config order)", i, tool.Name, tool.Server.ID(), want)
			}
		}
		// 100 calls per server, all servers at once.
		var calls []callTool
		for _, tool := range tools {
			calls = append(calls, handlerCall(tool.Handler))
		}
		var next atomic.Int64
		err = runConcurrent(ctx, 100*len(tools), loadCallers, func(ctx context.Context) error {
			return calls[int(next.Add(1))%len(calls)](ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	for _, tc := range []struct {
		name string
		cfg  func(t *testing.T) bridge.ServerConfig
	}{
		{"stdio", func(*testing.T) bridge.ServerConfig { return benchStdio("stdio", bin) }},
		{"streamable HTTP", func(t *testing.T) bridge.ServerConfig {
			return bridge.ServerConfig{ID: "http", Type: bridge.TypeHTTP, URL: benchHTTP(t, newBenchServer(0), false)}
		}},
		{"stateless streamable HTTP", func(t *testing.T) bridge.ServerConfig { // 2026-07-28: direct POSTs
			return bridge.ServerConfig{ID: "http", Type: bridge.TypeHTTP, URL: benchHTTP(t, newBenchServer(0), true)}
		}},
	} {
		t.Run(fmt.Sprintf("%d calls over %d goroutines, %s", loadCalls, loadCallers, tc.name), func(t *testing.T) {
			ctx := testContext(t, testTimeout)
			cfg := tc.cfg(t)
			s, err := bridge.Dial(ctx, cfg, &bridge.Options{Logger: testLogger(t)})
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			call := handlerCall(benchTool(t, s.Tools(), cfg.ID, "add").Handler)
			var made atomic.Int64
			start := time.Now()
			err = runConcurrent(ctx, loadCalls, loadCallers, func(ctx context.Context) error {
				made.Add(1)
				return call(ctx)
			})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("after %d calls: %v", made.Load(), err)
			}
			if made.Load() != loadCalls {
				t.Fatalf("made %d calls, want %d", made.Load(), loadCalls)
			}
			t.Logf("%d calls in %v (%.0f calls/s)", loadCalls, elapsed.Round(time.Millisecond), loadCalls/elapsed.Seconds())
		})
	}

	// Everything above is closed (subtest cleanups have run). Idle HTTP keep-alive
	// connections ended with the httptest server.
	if n := waitGoroutines(baseGoroutines, 15*time.Second); n > baseGoroutines {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Errorf("goroutine leak: %d running 15s after close, baseline %d\n%s", n, baseGoroutines, b.String())
	}
	if !haveProc {
		t.Log("no /proc: child processes not counted")
		return
	}
	left := waitChildren(baseKids, 15*time.Second)
	if len(left) > 0 {
		t.Errorf("process leak: child processes left after close: %v", left)
	}
}

// childProcesses returns this process's children (PID → "state command", state R, S, Z...),
// read from /proc/*/stat. ok is false where /proc is not available (not Linux).
func childProcesses() (kids map[int]string, ok bool) {
	if runtime.GOOS != "linux" {
		return nil, false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	kids = map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may contain spaces and parentheses.
		s := string(data)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == self {
			kids[pid] = f[0] + " " + s[open+1:end]
		}
	}
	return kids, true
}

// waitChildren polls until every child process not in base is gone (reaped), or the
// deadline passes, and returns the ones left, sorted by PID.
func waitChildren(base map[int]string, within time.Duration) []string {
	deadline := time.Now().Add(within)
	for {
		kids, _ := childProcesses()
		var left []string
		for pid, what := range kids {
			if _, old := base[pid]; !old {
				left = append(left, strconv.Itoa(pid)+" "+what)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			sort.Strings(left)
			return left
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an event
	}
}
