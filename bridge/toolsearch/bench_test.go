package toolsearch_test

import (
	"fmt"
	"testing"

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

// BenchmarkNew builds the index of 1,000 tools.
func BenchmarkNew(b *testing.B) {
	docs := thousandDocs(b)
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.New(docs)
	}
}
