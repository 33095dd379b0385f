package main

import "fmt"

// The section on a host with hundreds of servers (issue 37): its step and its rendering.

// scaleSteps runs BenchmarkScale (about a minute; it makes one measurement whatever the
// bench time).
func scaleSteps() []step {
	return []step{
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkScale$", "-test.benchtime", "1x", "-test.timeout", "15m"}},
	}
}

// scaleKinds are BenchmarkScale's kinds of server and the sizes it assembles of each.
var scaleKinds = []struct {
	key, label string
	sizes      []int
}{
	{"stateless", "Streamable HTTP, stateless 2026-07-28", []int{10, 100, 1000}},
	{"stateful", "Streamable HTTP, stateful 2025-11-25 sessions", []int{10, 100, 1000}},
	{"stdio", "stdio, 2026-07-28", []int{10, 100}},
}

// scaleCosts are BenchmarkScale's per-server figures: unit and label.
var scaleCosts = []struct{ unit, label string }{
	{"connect-µs/server", "time to assemble"},
	{"heap-KiB/server", "heap"},
	{"goroutines/server", "goroutines"},
	{"fds/server", "file descriptors"},
}

// renderScale writes the section on a host with hundreds of servers.
func renderScale(w func(string, ...any), val func(name, unit string) float64) {
	const s = "BenchmarkScale"
	w("\n## A host with hundreds of servers\n\n")
	w("`BenchmarkScale` (`integration/scale_bench_test.go`) assembles 10, 100 and 1,000 Streamable HTTP\n")
	w("endpoints of each kind, go-sdk servers in processes of their own on loopback\n")
	w("(`integration/testdata/scaleserver`, 250 endpoints per process, four processes per kind), and 10 and\n")
	w("100 stdio servers (the same program), each offering `add` and 9 of the sweep's tools (a thousand\n")
	w("endpoints: 10,000 tools), with one `bridge.Connect` (`AlwaysPrefix`) and with raw go-sdk\n")
	w("(`mcp.Client.Connect` and a full `tools/list` per server, all at once, the lists kept; the\n")
	w("sessions share one HTTP client). Per server: the time to assemble (wall time of the whole\n")
	w("assembly ÷ servers), the heap after GC once the set settled, goroutines and file descriptors\n")
	w("(this process's, `/proc/self/fd`); the servers' side is not in them. The bridge opens a\n")
	w("`subscriptions/listen` stream to each 2026-07-28 server; raw go-sdk, without a\n")
	w("`ToolListChangedHandler`, opens none. \"Other protocol\" counts the servers the bridge left on\n")
	w("another protocol than their kind's (server/discover unanswered for a quarter of the connect\n")
	w("timeout: the bridge falls back to initialize); \"skipped\" the servers it skipped (Set.Failed).\n\n")
	w("| servers | kind | time to assemble, bridge (raw) | heap, bridge (raw) | bridge ÷ raw heap | goroutines, bridge (raw) | fds, bridge (raw) | other protocol | skipped |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range scaleKinds {
		for _, n := range k.sizes {
			p := fmt.Sprintf("%s-%d-", k.key, n)
			g := func(unit string) float64 { return val(s, p+unit) }
			w("| %s | %s | %s (%s) | %.0f KiB (%.0f KiB) | %.2f× | %.1f (%.1f) | %.2f (%.2f) | %.0f | %.0f |\n", thousands(float64(n)), k.label,
				dur(1e3*g("connect-µs/server")), dur(1e3*g("raw-connect-µs/server")),
				g("heap-KiB/server"), g("raw-heap-KiB/server"), g("heap-bridge/raw"),
				g("goroutines/server"), g("raw-goroutines/server"), g("fds/server"), g("raw-fds/server"), g("other-protocol"), g("skipped"))
		}
	}
	w("\nThe slope of each per-server figure over the sizes (least-squares line through the three\n")
	w("sizes, two for stdio): the change per 1,000 more servers, and in brackets the change along the\n")
	w("line from the smallest size to the largest ÷ the mean of the figure; flat is 0.\n\n")
	w("| kind | side |")
	for _, c := range scaleCosts {
		w(" %s |", c.label)
	}
	w("\n|---|---|---|---|---|---|\n")
	for _, k := range scaleKinds {
		for _, side := range []struct{ key, label string }{{"", "mcpbridge"}, {"raw-", "raw go-sdk"}} {
			w("| %s | %s |", k.label, side.label)
			for _, c := range scaleCosts {
				slope := val(s, k.key+"-"+side.key+"slope-"+c.unit+"-per-1k")
				mean := 0.0
				for _, n := range k.sizes {
					mean += val(s, fmt.Sprintf("%s-%d-%s%s", k.key, n, side.key, c.unit)) / float64(len(k.sizes))
				}
				rel := "—"
				if mean != 0 {
					span := float64(k.sizes[len(k.sizes)-1] - k.sizes[0])
					rel = fmt.Sprintf("%+.0f %%", 100*slope/1000*span/mean)
				}
				w(" %s (%s) |", scaleFigure(c.unit, slope), rel)
			}
			w("\n")
		}
	}
	w("\nWhile servers come and go: %s calls of `add` from 16 goroutines, round robin over %.0f\n", thousands(val(s, "churn-calls")), val(s, "churn-servers"))
	w("servers dialled one by one (`bridge.Dial`; half stateless, half stateful), first calm, then while\n")
	w("one server after another (at random) is closed and dialled again; a call holds its server, so a\n")
	w("server closes once its calls are done, and no call may fail.\n\n")
	w("| calm calls/s | calls/s during churn | churn ÷ calm | servers closed and dialled again | per second |\n|---|---|---|---|---|\n")
	w("| %s | %s | %.2f | %.0f | %.1f |\n\n", thousands(val(s, "churn-calm-calls/s")), thousands(val(s, "churn-calls/s")),
		val(s, "churn/calm"), val(s, "churn-redials"), val(s, "churn-redials/s"))
	w("Tool search in the same run: `Set.Search` (top 10) over the %s tools of the 1,000 stateless\n", thousands(val(s, "search-tools")))
	w("endpoints, each of the %.0f tasks of the tuning sets once, in the thread's CPU time (Linux);\n", val(s, "search-queries"))
	w("the first search builds the index.\n\n")
	w("| building the index | p50 of one query | p99 of one query (target < 1 ms) |\n|---|---|---|\n")
	w("| %s | %s | %s |\n", dur(val(s, "search-index-ns")), dur(val(s, "search-p50-cpu-ns")), dur(val(s, "search-p99-cpu-ns")))
}

// scaleFigure formats a slope per 1,000 servers of the per-server figure in unit.
func scaleFigure(unit string, v float64) string {
	switch unit {
	case "connect-µs/server":
		neg := "+"
		if v < 0 {
			neg, v = "-", -v
		}
		return neg + dur(1e3*v)
	case "heap-KiB/server":
		return fmt.Sprintf("%+.1f KiB", v)
	}
	return fmt.Sprintf("%+.2f", v)
}
