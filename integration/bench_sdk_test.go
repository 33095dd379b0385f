package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// The benchmark of issues 13 and 23: the bridge's Tool.Handler against a minimal
// hand-written JSON-RPC client (the server's ceiling, bench_ceiling_test.go), raw go-sdk
// and the TypeScript SDK's raw client (testdata/tsbench/client.mjs, @modelcontextprotocol/sdk
// pinned in package.json), all calling "add" on the same go-sdk server
// (testdata/benchserver) over stdio, sdkServers processes each, in the same run. Every
// client runs with its default settings (the protocol it negotiates); the bridge, go-sdk
// and the ceiling client also run pinned to 2025-11-25 ("-2025"). integration/bench
// regenerates BENCHMARKS.md from the numbers.

const (
	sdkServers = 8    // stdio server processes per client
	sdkCalls   = 3000 // calls per measurement
	sdkWidth   = 16   // concurrent callers of the wide measurement
)

// sdkClient is one contender: run makes calls calls from width callers, round-robin over
// its servers, and returns the wall time.
type sdkClient struct {
	name string
	run  func(ctx context.Context, calls, width int) (time.Duration, error)
}

// BenchmarkVsSDKs runs sdkCalls calls in sequence, then sdkCalls calls sdkWidth at a time,
// through each client in turn; one op is one such round over all clients, and the best
// round of each measurement is reported as "<client>-seq-calls/s" and
// "<client>-16wide-calls/s", and for the Go clients this process's CPU time per call
// ("<client>-cpu-us/call", over all rounds). Use -benchtime 8x for the best of 8 (as the
// bench script does) interleaved rounds:
//
//	go test -run '^$' -bench VsSDKs -benchtime 8x ./integration/
//
// It needs node and `npm ci` in integration/ (it fails under CI=true without them).
func BenchmarkVsSDKs(b *testing.B) {
	ctx := benchContext(b)
	bin := buildBenchServer(b)
	clients := []sdkClient{
		ceilingClient(ctx, b, bin, "ceiling", "2026-07-28", ceilingEnvelope),
		ceilingClient(ctx, b, bin, "ceiling-env", "2026-07-28", bridgeEnvelope()),
		bridgeClient(ctx, b, bin, "bridge", benchDefault),
		goSDKClient(ctx, b, bin, "gosdk", benchDefault),
		ceilingClient(ctx, b, bin, "ceiling-2025", benchLegacy, ""),
		bridgeClient(ctx, b, bin, "bridge-2025", benchLegacy),
		goSDKClient(ctx, b, bin, "gosdk-2025", benchLegacy),
	}
	if ts, ok := tsClient(ctx, b, bin); ok {
		clients = append(clients, ts)
	}
	type best struct{ seq, wide time.Duration }
	bests := make([]best, len(clients))
	cpu := make([]time.Duration, len(clients)) // this process's CPU time during each client's runs
	calls := make([]int, len(clients))
	measure := func(c sdkClient, width int) time.Duration {
		d, err := c.run(ctx, sdkCalls, width)
		if err != nil {
			b.Fatalf("%s, %d wide: %v", c.name, width, err)
		}
		return d
	}
	// Warm-up: connections, JIT, validators, buffers.
	for _, c := range clients {
		measure(c, sdkWidth)
	}
	b.ResetTimer()
	for round := range b.N {
		for k := range clients {
			i := (k + round) % len(clients) // rotate who goes first
			c := clients[i]
			t0 := processCPU()
			seq, wide := measure(c, 1), measure(c, sdkWidth)
			cpu[i] += processCPU() - t0
			calls[i] += 2 * sdkCalls
			if bests[i].seq == 0 || seq < bests[i].seq {
				bests[i].seq = seq
			}
			if bests[i].wide == 0 || wide < bests[i].wide {
				bests[i].wide = wide
			}
		}
	}
	b.StopTimer()
	rate := func(d time.Duration) float64 { return sdkCalls / d.Seconds() }
	for i, c := range clients {
		b.ReportMetric(rate(bests[i].seq), c.name+"-seq-calls/s")
		b.ReportMetric(rate(bests[i].wide), c.name+"-"+strconv.Itoa(sdkWidth)+"wide-calls/s")
		if cpu[i] > 0 && c.name != "ts" { // the TypeScript client runs in a process of its own
			b.ReportMetric(float64(cpu[i].Microseconds())/float64(calls[i]), c.name+"-cpu-us/call")
		}
	}
}

// roundRobin makes calls calls from width goroutines, each call going to the next of the
// n targets.
func roundRobin(ctx context.Context, calls, width, n int, call func(ctx context.Context, i int) error) (time.Duration, error) {
	var next atomic.Int64
	start := time.Now()
	err := runConcurrent(ctx, calls, width, func(ctx context.Context) error {
		return call(ctx, int(next.Add(1)%int64(n)))
	})
	return time.Since(start), err
}

// bridgeClient connects sdkServers stdio servers through bridge.Connect (offering
// protocol; "" negotiates) and calls each server's "add" through its Tool.Handler.
func bridgeClient(ctx context.Context, b *testing.B, bin, name, protocol string) sdkClient {
	cfgs := make([]bridge.ServerConfig, sdkServers)
	for i := range cfgs {
		cfgs[i] = benchStdio("s"+strconv.Itoa(i), bin)
		cfgs[i].ProtocolVersion = protocol
	}
	tools, err := bridge.Connect(ctx, cfgs, benchOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tools.Close() })
	calls := make([]callTool, sdkServers)
	for i, cfg := range cfgs {
		calls[i] = handlerCall(benchTool(b, tools.Tools(), cfg.ID, "add").Handler)
	}
	return sdkClient{name: name, run: func(ctx context.Context, n, width int) (time.Duration, error) {
		return roundRobin(ctx, n, width, len(calls), func(ctx context.Context, i int) error { return calls[i](ctx) })
	}}
}

// goSDKClient connects sdkServers raw go-sdk client sessions (mcp.CommandTransport,
// offering protocol; "" negotiates) and calls "add" with ClientSession.CallTool.
func goSDKClient(ctx context.Context, b *testing.B, bin, name, protocol string) sdkClient {
	calls := make([]callTool, sdkServers)
	for i := range calls {
		cs, err := rawStdio(ctx, bin, protocol)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		calls[i] = rawCall(cs)
	}
	return sdkClient{name: name, run: func(ctx context.Context, n, width int) (time.Duration, error) {
		return roundRobin(ctx, n, width, len(calls), func(ctx context.Context, i int) error { return calls[i](ctx) })
	}}
}

// tsClient starts testdata/tsbench/client.mjs with sdkServers servers. It reports false
// (skipping that contender) when node or the npm packages are missing, and fails under
// CI=true.
func tsClient(ctx context.Context, b *testing.B, bin string) (sdkClient, bool) {
	missing := func(format string, args ...any) (sdkClient, bool) {
		if os.Getenv("CI") == "true" {
			b.Fatalf(format, args...)
		}
		b.Logf("TypeScript SDK client left out: "+format, args...)
		return sdkClient{}, false
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return missing("no node: %v", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return missing("@modelcontextprotocol/sdk not installed (run npm ci in integration/): %v", err)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "tsbench", "client.mjs"), bin, strconv.Itoa(sdkServers))
	// Closing stdin (when the benchmark ends) makes the script close its sessions (ending its
	// servers) and exit.
	stdin, stdout := startPiped(b, cmd)
	lines := bufio.NewScanner(stdout)
	readLine := func() (string, error) {
		type result struct {
			line string
			err  error
		}
		got := make(chan result, 1)
		go func() {
			if lines.Scan() {
				got <- result{line: lines.Text()}
				return
			}
			err := lines.Err()
			if err == nil {
				err = io.EOF
			}
			got <- result{err: fmt.Errorf("client.mjs ended: %w", err)}
		}()
		select {
		case r := <-got:
			return r.line, r.err
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return "", ctx.Err()
		}
	}
	if line, err := readLine(); err != nil || line != "ready" {
		b.Fatalf("client.mjs start: %q, %v", line, err)
	}
	return sdkClient{name: "ts", run: func(ctx context.Context, n, width int) (time.Duration, error) {
		cmdLine := fmt.Sprintf("par %d %d\n", n, width)
		if width == 1 {
			cmdLine = fmt.Sprintf("seq %d\n", n)
		}
		if _, err := io.WriteString(stdin, cmdLine); err != nil {
			return 0, err
		}
		line, err := readLine()
		if err != nil {
			return 0, err
		}
		ns, ok := strings.CutPrefix(line, "ok ")
		if !ok {
			return 0, fmt.Errorf("client.mjs: %s", line)
		}
		v, err := strconv.ParseInt(ns, 10, 64)
		return time.Duration(v), err
	}}, true
}
