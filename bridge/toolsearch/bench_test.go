package toolsearch_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// thousandDocs is 1,000 tools (manyDocs).
func thousandDocs(tb testing.TB) []toolsearch.Document { return manyDocs(tb, 1000) }

// manyDocs is n tools: the sweep's 450, then copies of them as if from further servers (IDs
// and names suffixed), so vocabulary and lengths stay realistic.
func manyDocs(tb testing.TB, n int) []toolsearch.Document {
	base := sweepDocs(tb)
	docs := make([]toolsearch.Document, 0, n)
	for copyN := 0; len(docs) < n; copyN++ {
		for _, d := range base {
			if len(docs) == n {
				break
			}
			if copyN > 0 {
				d.Name = fmt.Sprintf("%s_%d", d.Name, copyN)
				d.Server = fmt.Sprintf("%s-%d", d.Server, copyN)
			}
			docs = append(docs, d)
		}
	}
	return docs
}

// BenchmarkSearch is one query (top 10) over 1,000 tools, cycling through the query set.
func BenchmarkSearch(b *testing.B) {
	ix := toolsearch.New(thousandDocs(b))
	qs := queries(b, "testdata/queries.json")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)].Query, 10)
		i++
	}
}

// BenchmarkIndex is what Tools.Index costs for 1,000 tools: each inputSchema read for its
// parameters, then New. old reads the schemas as before issue 34 (oldParams: each level
// decoded again); new with Params, in one pass.
func BenchmarkIndex(b *testing.B) {
	docs := thousandDocs(b)
	schemas := rawSchemas(b, "testdata/sweep.json")
	for _, path := range []struct {
		name   string
		params func(json.RawMessage) []toolsearch.Param
	}{{"old", oldParams}, {"new", toolsearch.Params}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				in := make([]toolsearch.Document, len(docs))
				for i, d := range docs {
					d.Params = path.params(schemas[i%len(schemas)])
					in[i] = d
				}
				toolsearch.New(in)
			}
		})
	}
}

// BenchmarkSearchP99 times each task of the tuning sets once per round over 1,000 tools and
// over 10,000, and reports the 99th percentile of one query's CPU time for each (p99-cpu-ns
// and p99-10k-cpu-ns: the thread's CPU clock on Linux, so a loaded machine does not count
// its waits), the figures the latency targets are for.
func BenchmarkSearchP99(b *testing.B) {
	small, large := toolsearch.New(thousandDocs(b)), toolsearch.New(manyDocs(b, 10_000))
	qs := append(queries(b, "testdata/queries.json"), queries(b, "testdata/queries-heldout.json")...)
	var tookSmall, tookLarge []time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for _, q := range qs {
			start := threadCPU()
			small.Search(q.Query, 10)
			mid := threadCPU()
			large.Search(q.Query, 10)
			tookSmall, tookLarge = append(tookSmall, mid-start), append(tookLarge, threadCPU()-mid)
		}
	}
	for _, m := range []struct {
		took []time.Duration
		unit string
	}{{tookSmall, "p99-cpu-ns"}, {tookLarge, "p99-10k-cpu-ns"}} {
		slices.Sort(m.took)
		b.ReportMetric(float64(m.took[len(m.took)*99/100].Nanoseconds()), m.unit)
	}
}

// BenchmarkNew builds the index of 1,000 tools.
func BenchmarkNew(b *testing.B) {
	docs := thousandDocs(b)
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.New(docs)
	}
}
