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

// thousandDocs is 1,000 tools: the sweep's 450, then copies of them as if from further
// servers (IDs and names suffixed), so vocabulary and lengths stay realistic.
func thousandDocs(tb testing.TB) []toolsearch.Document {
	base := sweepDocs(tb)
	docs := make([]toolsearch.Document, 0, 1000)
	for copyN := 0; len(docs) < 1000; copyN++ {
		for _, d := range base {
			if len(docs) == 1000 {
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

// BenchmarkSearchP99 times each task of the tuning sets once per round over 1,000 tools
// and reports the 99th percentile of one query's CPU time (p99-cpu-ns: the thread's CPU
// clock on Linux, so a loaded machine does not count its waits), the figure the latency
// target is for.
func BenchmarkSearchP99(b *testing.B) {
	ix := toolsearch.New(thousandDocs(b))
	qs := append(queries(b, "testdata/queries.json"), queries(b, "testdata/queries-heldout.json")...)
	var took []time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		for _, q := range qs {
			start := threadCPU()
			ix.Search(q.Query, 10)
			took = append(took, threadCPU()-start)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-cpu-ns")
}

// BenchmarkNew builds the index of 1,000 tools.
func BenchmarkNew(b *testing.B) {
	docs := thousandDocs(b)
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.New(docs)
	}
}
