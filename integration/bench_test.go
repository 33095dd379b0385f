package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// The benchmarks of issues 7, 13 and 23. Every bridge number has a baseline measured in the
// same run (raw go-sdk, a hand-written client, or the same work done without the bridge);
// `go run ./integration/bench` runs them and regenerates BENCHMARKS.md.

// benchTimeout bounds the set-up and every measured loop of a benchmark; it only matters
// when something hangs.
const benchTimeout = 5 * time.Minute

func benchContext(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	b.Cleanup(cancel)
	return ctx
}

// callPair is the raw go-sdk call and the bridge Handler call of one add tool.
type callPair struct {
	raw, bridge callTool
}

// callPairs connects a raw go-sdk session and a bridge Server to the same "add" server
// over in-memory transports, over stdio (two processes of the same binary) and over
// Streamable HTTP (one loopback server in a process of its own, testdata/benchserver
// -http; the raw session uses go-sdk's default HTTP client, the bridge its own
// transport), each with the default protocol (negotiated:
// 2026-07-28; over HTTP a stateless server, the kind that speaks it) and pinned to
// 2025-11-25 ("-2025"; over HTTP go-sdk's default, stateful server). Both sides of a pair
// must end up on the same protocol version.
func callPairs(b *testing.B) []struct {
	name string
	open func(b *testing.B) callPair
} {
	bin := buildBenchServer(b)
	type pairer = struct {
		name string
		open func(b *testing.B) callPair
	}
	var pairs []pairer
	for _, proto := range []string{benchDefault, benchLegacy} {
		suffix := ""
		if proto != benchDefault {
			suffix = "-2025"
		}
		pair := func(b *testing.B, cs *mcp.ClientSession, s *bridge.Server, id string) callPair {
			b.Cleanup(func() { _ = cs.Close() })
			b.Cleanup(func() { _ = s.Close() })
			if rv, bv := cs.InitializeResult().ProtocolVersion, s.Status().ProtocolVersion; rv != bv || (proto != "" && rv != proto) {
				b.Fatalf("raw go-sdk negotiated %q, the bridge %q", rv, bv)
			}
			return callPair{raw: rawCall(cs), bridge: handlerCall(benchTool(b, s.Tools(), id, "add").Handler)}
		}
		pairs = append(pairs,
			pairer{"inmemory" + suffix, func(b *testing.B) callPair {
				ctx := benchContext(b)
				srv := newBenchServer(0)
				cs, err := rawInMemory(ctx, srv, proto)
				if err != nil {
					b.Fatal(err)
				}
				cfg := benchInProcess("mem", srv, 0)
				cfg.ProtocolVersion = proto
				s, err := bridge.Dial(ctx, cfg, benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				return pair(b, cs, s, "mem")
			}},
			pairer{"stdio" + suffix, func(b *testing.B) callPair {
				ctx := benchContext(b)
				cs, err := rawStdio(ctx, bin, proto)
				if err != nil {
					b.Fatal(err)
				}
				cfg := benchStdio("stdio", bin)
				cfg.ProtocolVersion = proto
				s, err := bridge.Dial(ctx, cfg, benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				return pair(b, cs, s, "stdio")
			}},
			pairer{"http" + suffix, func(b *testing.B) callPair {
				ctx := benchContext(b)
				url := benchHTTPProcess(b, bin, proto == benchDefault)
				cs, err := newRawClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url},
					&mcp.ClientSessionOptions{ProtocolVersion: proto})
				if err != nil {
					b.Fatal(err)
				}
				s, err := bridge.Dial(ctx, bridge.ServerConfig{ID: "http", Type: bridge.TypeHTTP, URL: url, ProtocolVersion: proto}, benchOptions())
				if err != nil {
					b.Fatal(err)
				}
				return pair(b, cs, s, "http")
			}},
		)
	}
	return pairs
}

// BenchmarkCall measures one tools/call of "add": the raw go-sdk ClientSession.CallTool
// (raw) against the bridge's Tool.Handler (bridge: argument check and validation, call,
// flattening), over in-memory transports and stdio, from 1 and 16 concurrent callers.
// ns/op is wall time per call, so 1e9/ns/op is the throughput. For in-memory, allocs/op
// include the go-sdk server's side (the same for raw and bridge).
func BenchmarkCall(b *testing.B) {
	for _, tr := range callPairs(b) {
		b.Run(tr.name, func(b *testing.B) {
			p := tr.open(b)
			for _, conc := range []int{1, 16} {
				b.Run("c"+strconv.Itoa(conc), func(b *testing.B) {
					for _, side := range []struct {
						name string
						call callTool
					}{{"raw", p.raw}, {"bridge", p.bridge}} {
						b.Run(side.name, func(b *testing.B) {
							ctx := benchContext(b)
							b.ReportAllocs()
							b.ResetTimer()
							if err := runConcurrent(ctx, b.N, conc, side.call); err != nil {
								b.Fatal(err)
							}
						})
					}
				})
			}
		})
	}
}

// BenchmarkCallRatio runs the raw and the bridge calls of BenchmarkCall interleaved, in
// rounds of up to 256 calls per side (alternating which side goes first), so that both see
// the same machine load; it reports the bridge's throughput as a fraction of raw
// ("bridge/raw", target ≥ 1.0) and, per call and side, wall time, this process's CPU time
// (client and, for in-memory, server; unix only) and heap allocations, which a loaded
// machine disturbs far less than wall time. One op is one raw call plus one bridge call.
func BenchmarkCallRatio(b *testing.B) {
	for _, tr := range callPairs(b) {
		b.Run(tr.name, func(b *testing.B) {
			p := tr.open(b)
			for _, conc := range []int{1, 16} {
				b.Run("c"+strconv.Itoa(conc), func(b *testing.B) {
					ctx := benchContext(b)
					const round = 256
					type cost struct {
						wall, cpu      time.Duration
						allocs, allocB uint64
					}
					var rawD, bridgeD cost
					var ms runtime.MemStats
					timed := func(n int, call callTool, d *cost) {
						runtime.ReadMemStats(&ms)
						allocs, allocB := ms.Mallocs, ms.TotalAlloc
						cpu := processCPU()
						start := time.Now()
						if err := runConcurrent(ctx, n, conc, call); err != nil {
							b.Fatal(err)
						}
						d.wall += time.Since(start)
						d.cpu += processCPU() - cpu
						runtime.ReadMemStats(&ms)
						d.allocs += ms.Mallocs - allocs
						d.allocB += ms.TotalAlloc - allocB
					}
					b.ResetTimer()
					for i, done := 0, 0; done < b.N; i++ {
						n := min(round, b.N-done)
						if i%2 == 0 {
							timed(n, p.raw, &rawD)
							timed(n, p.bridge, &bridgeD)
						} else {
							timed(n, p.bridge, &bridgeD)
							timed(n, p.raw, &rawD)
						}
						done += n
					}
					per := func(v float64) float64 { return v / float64(b.N) }
					b.ReportMetric(per(float64(rawD.wall.Nanoseconds())), "raw-ns/call")
					b.ReportMetric(per(float64(bridgeD.wall.Nanoseconds())), "bridge-ns/call")
					b.ReportMetric(float64(rawD.wall)/float64(bridgeD.wall), "bridge/raw")
					if rawD.cpu > 0 {
						b.ReportMetric(per(float64(rawD.cpu.Microseconds())), "raw-cpu-us/call")
						b.ReportMetric(per(float64(bridgeD.cpu.Microseconds())), "bridge-cpu-us/call")
					}
					b.ReportMetric(per(float64(rawD.allocs)), "raw-allocs/call")
					b.ReportMetric(per(float64(bridgeD.allocs)), "bridge-allocs/call")
					b.ReportMetric(per(float64(rawD.allocB)), "raw-B/call")
					b.ReportMetric(per(float64(bridgeD.allocB)), "bridge-B/call")
				})
			}
		})
	}
}

// BenchmarkAssembly measures the start-up of assemblyServers stdio servers
// (testdata/benchserver): bridge.Connect of all of them against raw go-sdk doing the same
// work (CommandTransport, Connect and a full tools/list of each, concurrently), on the
// default protocol and pinned to 2025-11-25. Bridge and raw alternate within each
// iteration (who goes first alternates too); closing is not timed. It reports the median
// "bridge-ms" and "raw-ms" per assembly and "bridge/raw", the median of the iterations'
// ratios (target ≤ 1.1); the bench script runs 61 iterations, and a garbage collection
// (untimed) precedes each side. A third side,
// "rawsub-ms", is raw go-sdk with a ToolListChangedHandler, which makes its Connect open
// the subscriptions/listen stream the bridge opens to follow tool changes (2026-07-28);
// "bridge/rawsub" compares the bridge with it.
func BenchmarkAssembly(b *testing.B) {
	const assemblyServers = 8
	bin := buildBenchServer(b)
	for _, proto := range []string{benchDefault, benchLegacy} {
		name := "default"
		if proto != benchDefault {
			name = proto
		}
		b.Run(name, func(b *testing.B) {
			ctx := benchContext(b)
			cfgs := make([]bridge.ServerConfig, assemblyServers)
			for i := range cfgs {
				cfgs[i] = benchStdio("s"+strconv.Itoa(i), bin)
				cfgs[i].ProtocolVersion = proto
			}
			viaBridge := func() time.Duration {
				runtime.GC() // no side pays for the garbage of the one before
				start := time.Now()
				set, err := bridge.Connect(ctx, cfgs, benchOptions())
				d := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if tools := set.Tools(); len(tools) != len(cfgs) {
					b.Fatalf("%d tools from %d servers (skipped: %v)", len(tools), len(cfgs), set.Failed())
				}
				_ = set.Close()
				return d
			}
			viaSDK := func(subscribe bool) time.Duration {
				sessions := make([]*mcp.ClientSession, len(cfgs))
				errs := make([]error, len(cfgs))
				opts := &mcp.ClientOptions{Logger: slog.New(slog.DiscardHandler), Capabilities: &mcp.ClientCapabilities{}}
				if subscribe {
					opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {}
				}
				client := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, opts)
				runtime.GC()
				start := time.Now()
				var wg sync.WaitGroup
				for i := range cfgs {
					wg.Go(func() {
						cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin), TerminateDuration: 2 * time.Second},
							&mcp.ClientSessionOptions{ProtocolVersion: proto})
						if err == nil {
							var tools []*mcp.Tool
							for t, lerr := range cs.Tools(ctx, nil) {
								if lerr != nil {
									err = lerr
									break
								}
								tools = append(tools, t)
							}
							if err == nil && len(tools) != 1 {
								err = fmt.Errorf("listed %d tools", len(tools))
							}
						}
						sessions[i], errs[i] = cs, err
					})
				}
				wg.Wait()
				d := time.Since(start)
				for i, cs := range sessions {
					if errs[i] != nil {
						b.Fatal(errs[i])
					}
					_ = cs.Close()
				}
				return d
			}
			// Each iteration measures the three side by side (who goes first alternates); the
			// medians are reported, and the ratios are the medians of the iterations' ratios.
			var viaB, viaS, viaSub, perS, perSub []float64
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ResetTimer()
			for i := range b.N {
				var db, ds, dsub time.Duration
				if i%2 == 0 {
					db = viaBridge()
					ds = viaSDK(false)
					dsub = viaSDK(true)
				} else {
					dsub = viaSDK(true)
					ds = viaSDK(false)
					db = viaBridge()
				}
				viaB, viaS, viaSub = append(viaB, ms(db)), append(viaS, ms(ds)), append(viaSub, ms(dsub))
				perS, perSub = append(perS, float64(db)/float64(ds)), append(perSub, float64(db)/float64(dsub))
			}
			b.ReportMetric(median(viaB), "bridge-ms")
			b.ReportMetric(median(viaS), "raw-ms")
			b.ReportMetric(median(viaSub), "rawsub-ms")
			b.ReportMetric(median(perS), "bridge/raw")
			b.ReportMetric(median(perSub), "bridge/rawsub")
		})
	}
}

// footprint is what a set of open sessions holds.
type footprint struct {
	heap       int64 // HeapAlloc after GC, beyond the baseline
	goroutines int   // beyond the baseline
}

// heapAfterGC returns HeapAlloc after two full collections (the second frees what the
// first's finalizers released).
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// waitGoroutines polls until at most max goroutines run or the deadline passes, and
// returns the last count.
func waitGoroutines(max int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		n := runtime.NumGoroutine()
		if n <= max || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// measure opens something, measures the heap and goroutines it holds, and closes it again,
// waiting for its goroutines to end.
func measure(b *testing.B, open func() (keep any, closeAll func())) footprint {
	base := runtime.NumGoroutine()
	h0 := heapAfterGC()
	keep, closeAll := open()
	settle(10 * time.Second)
	h1 := heapAfterGC()
	g1 := runtime.NumGoroutine()
	runtime.KeepAlive(keep)
	closeAll()
	if n := waitGoroutines(base, 10*time.Second); n > base {
		b.Fatalf("%d goroutines still running 10s after close (baseline %d)", n, base)
	}
	return footprint{heap: h1 - h0, goroutines: g1 - base}
}

// settle waits (at most max) until the number of goroutines has not changed for 300 ms: the
// work a set does in the background after Connect (its subscriptions/listen, opened
// listenHoldMax after each listing, and the re-listing their acknowledgements start) is done.
func settle(max time.Duration) {
	deadline := time.Now().Add(max)
	n, since := runtime.NumGoroutine(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < 300*time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, since = m, time.Now()
		}
	}
}

// BenchmarkMemory measures the heap and goroutines held by 16 in-process servers × 100
// tools (realistic schemas of about 1.5 KB) through one bridge Connect, once it settled
// (settle), against 16 raw go-sdk sessions to the same servers that keep their tools/list
// result, and reports both
// per server and the bridge's extra per server and per tool (target: extra < 1 MiB per
// server). "novalidate" is the bridge with Options.DisableValidation, which shows what the
// compiled argument validators cost. Each op measures all three once.
func BenchmarkMemory(b *testing.B) {
	const nServers, nTools = 16, 100
	ctx := benchContext(b)
	srvs := make([]*mcp.Server, nServers)
	for i := range srvs {
		srvs[i] = newBenchServer(nTools - 1) // add + 99
	}
	rawOpen := func() (any, func()) {
		type held struct {
			cs    *mcp.ClientSession
			tools []*mcp.Tool
		}
		all := make([]held, nServers)
		for i, srv := range srvs {
			cs, err := rawInMemory(ctx, srv, benchDefault)
			if err != nil {
				b.Fatal(err)
			}
			all[i].cs = cs
			for t, err := range cs.Tools(ctx, nil) {
				if err != nil {
					b.Fatal(err)
				}
				all[i].tools = append(all[i].tools, t)
			}
			if len(all[i].tools) != nTools {
				b.Fatalf("raw session %d listed %d tools", i, len(all[i].tools))
			}
		}
		return all, func() {
			for _, h := range all {
				_ = h.cs.Close()
			}
		}
	}
	bridgeOpen := func(validate bool) func() (any, func()) {
		return func() (any, func()) {
			cfgs := make([]bridge.ServerConfig, nServers)
			for i, srv := range srvs {
				cfgs[i] = benchInProcess("s"+strconv.Itoa(i), srv, 0)
			}
			opts := benchOptions()
			opts.DisableValidation = !validate
			set, err := bridge.Connect(ctx, cfgs, opts)
			if err != nil {
				b.Fatal(err)
			}
			tools := set.Tools()
			if len(tools) != nServers*nTools {
				b.Fatalf("bridge listed %d tools (skipped: %v)", len(tools), set.Failed())
			}
			return tools, func() { _ = set.Close() }
		}
	}
	var raw, br, nv footprint
	b.ResetTimer()
	for range b.N {
		r := measure(b, rawOpen)
		v := measure(b, bridgeOpen(true))
		n := measure(b, bridgeOpen(false))
		raw.heap += r.heap
		raw.goroutines += r.goroutines
		br.heap += v.heap
		br.goroutines += v.goroutines
		nv.heap += n.heap
		nv.goroutines += n.goroutines
	}
	perServer := func(v int64) float64 { return float64(v) / float64(b.N) / nServers }
	b.ReportMetric(perServer(raw.heap)/1024, "raw-KiB/server")
	b.ReportMetric(perServer(br.heap)/1024, "bridge-KiB/server")
	b.ReportMetric(perServer(br.heap-raw.heap)/1024, "extra-KiB/server")
	b.ReportMetric(perServer(br.heap-raw.heap)/nTools, "extra-B/tool")
	b.ReportMetric(perServer(nv.heap-raw.heap)/1024, "novalidate-extra-KiB/server")
	b.ReportMetric(perServer(int64(raw.goroutines)), "raw-goroutines/server")
	b.ReportMetric(perServer(int64(br.goroutines)), "bridge-goroutines/server")
}

// BenchmarkFlatten flattens results of 1 MB and 10 MB with the bridge's default cap
// (results.Flatten, as a Handler does) against json.Marshal of the same result (what a
// bridge that hands the model the raw result would pay). MB/s equal across sizes and
// allocs/op independent of size show it linear and allocation-bounded.
func BenchmarkFlatten(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 2) + "\n"
		text := strings.Repeat(line, size/len(line))
		rows := make([]any, 0, size/64)
		for i := range cap(rows) {
			rows = append(rows, map[string]any{"id": float64(i), "name": "row " + strconv.Itoa(i) + " padding", "ok": i%2 == 0})
		}
		structured := map[string]any{"rows": rows}
		enc, err := json.Marshal(structured)
		if err != nil {
			b.Fatal(err)
		}
		kinds := []struct {
			name  string
			res   *mcp.CallToolResult
			bytes int
		}{
			{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, len(text)},
			{"structured", &mcp.CallToolResult{StructuredContent: structured}, len(enc)},
		}
		for _, k := range kinds {
			name := fmt.Sprintf("%s/%dMB", k.name, size>>20)
			b.Run(name+"/marshal", func(b *testing.B) {
				b.SetBytes(int64(k.bytes))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := json.Marshal(k.res); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/flatten", func(b *testing.B) {
				b.SetBytes(int64(k.bytes))
				b.ReportAllocs()
				for b.Loop() {
					if out, err := results.Flatten(k.res, nil); err != nil || out == "" {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkValidate calls a tool with a large inputSchema (records from $defs plus 300
// optional properties, about 30 KB) with valid arguments of 1 MB and 10 MB, over in-memory
// transports: the raw go-sdk CallTool (raw), the bridge Handler with validation off
// (novalidate) and on (bridge). bridge − novalidate is the validation cost; "jsonschema" is
// that work done directly with santhosh-tekuri/jsonschema/v6 (decode, then Validate), no
// call. MB/s equal across sizes shows it linear.
func BenchmarkValidate(b *testing.B) {
	ctx := benchContext(b)
	srv := newLargeSchemaServer()
	cs, err := rawInMemory(ctx, srv, benchDefault)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	handler := func(validate bool) func(context.Context, json.RawMessage) (string, error) {
		opts := benchOptions()
		opts.DisableValidation = !validate
		s, err := bridge.Dial(ctx, benchInProcess("bulk", srv, 0), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return benchTool(b, s.Tools(), "bulk", "bulk").Handler
	}
	novalidate, validate := handler(false), handler(true)
	sch, err := compileLarge()
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1 << 20, 10 << 20} {
		args := benchLargeArgs(size)
		want := strconv.Itoa(len(args)) + " bytes"
		sides := []struct {
			name string
			call func(ctx context.Context) (string, error)
		}{
			{"raw", func(ctx context.Context) (string, error) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bulk", Arguments: args})
				if err != nil {
					return "", err
				}
				return res.Content[0].(*mcp.TextContent).Text, nil
			}},
			{"novalidate", func(ctx context.Context) (string, error) { return novalidate(ctx, args) }},
			{"bridge", func(ctx context.Context) (string, error) { return validate(ctx, args) }},
			{"jsonschema", func(context.Context) (string, error) {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
				if err != nil {
					return "", err
				}
				if err := sch.Validate(inst); err != nil {
					return "", err
				}
				return want, nil
			}},
		}
		for _, side := range sides {
			b.Run(fmt.Sprintf("%dMB/%s", size>>20, side.name), func(b *testing.B) {
				b.SetBytes(int64(len(args)))
				b.ReportAllocs()
				for b.Loop() {
					out, err := side.call(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if out != want {
						b.Fatalf("got %q, want %q", out, want)
					}
				}
			})
		}
	}
}

// compileLarge compiles benchLargeSchema with santhosh-tekuri/jsonschema/v6 the way any
// validating client would (draft 2020-12, no external references needed).
func compileLarge() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(benchLargeSchema()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const loc = "urn:bench:large"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}
