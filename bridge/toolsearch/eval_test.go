package toolsearch_test

import (
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// heldOutFile is the held-out evaluation: tasks written in the words people use, before any
// ranking change of issue 34, over the sweep's tools and over servers no tuning used
// (testdata/unseen.json). Never tune on it: TestQuality's sets are for tuning.
const heldOutFile = "testdata/eval-heldout.json"

type evalSet struct {
	Name    string  `json:"name"`
	Tools   string  `json:"tools"`
	Queries []query `json:"queries"`
}

// heldOutSets are the sets of heldOutFile.
func heldOutSets(tb testing.TB) []evalSet {
	tb.Helper()
	data, err := os.ReadFile(heldOutFile)
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Sets []evalSet `json:"sets"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	return doc.Sets
}

// rankOf is the 1-based rank of the first wanted tool in got, or len(got)+1.
func rankOf(got []string, want []string) int {
	i := slices.IndexFunc(got, func(n string) bool { return slices.Contains(want, n) })
	if i < 0 {
		return len(got) + 1
	}
	return i + 1
}

// TestHeldOut reports, for each set of the held-out evaluation, recall@1, recall@5 and MRR
// of the index and of plain BM25, and the tasks where the index ranks the first wanted tool
// below where plain BM25 puts it (run with -v to see them). It fails only when the index
// does worse than plain BM25 overall: the targets (recall@5 ≥ 0.90, recall@1 ≥ 0.70, worse
// than BM25 on at most 5 % of tasks) are measured here, not asserted, so that nobody tunes to
// make this test pass.
func TestHeldOut(t *testing.T) {
	if total := evaluate(t, heldOutSets(t), *heldOutTasks); total < 150 {
		t.Errorf("%d held-out tasks, want at least 150", total)
	}
}

// evaluate logs, for each set, recall@1, recall@5 and MRR of the index and of plain BM25 and
// how many tasks the index ranks below plain BM25 (and, with showTasks, those tasks and the
// misses); it fails a set whose MRR is below plain BM25's. It returns the number of tasks.
func evaluate(t *testing.T, sets []evalSet, showTasks bool) int {
	t.Helper()
	var total int
	for _, set := range sets {
		docs := serverDocs(t, "testdata/"+set.Tools)
		known := map[string]bool{}
		for _, d := range docs {
			known[d.Name] = true
		}
		for _, q := range set.Queries {
			for _, w := range q.Want {
				if !known[w] {
					t.Errorf("%s: %q wants %q, which no tool of %s is", set.Name, q.Query, w, set.Tools)
				}
			}
		}
		total += len(set.Queries)
		ix := toolsearch.New(docs)
		base := newPlainBM25(docs)
		const depth = 50
		search := func(q string) []string { return names(ix.Search(q, depth)) }
		plainSearch := func(q string) []string { return base.search(q, depth) }
		ours, plain := measure(set.Queries, search), measure(set.Queries, plainSearch)
		var worse []string
		for _, q := range set.Queries {
			a, b := search(q.Query), plainSearch(q.Query)
			if ra, rb := rankOf(a, q.Want), rankOf(b, q.Want); ra > rb {
				worse = append(worse, q.Query+": rank "+itoa(ra)+" (BM25 "+itoa(rb)+"), first "+first(a))
			}
		}
		t.Logf("%s: %d tasks over %d tools", set.Name, len(set.Queries), len(docs))
		t.Logf("  toolsearch: recall@1 %.3f  recall@5 %.3f  MRR %.3f", ours.recall1, ours.recall5, ours.mrr)
		t.Logf("  plain BM25: recall@1 %.3f  recall@5 %.3f  MRR %.3f", plain.recall1, plain.recall5, plain.mrr)
		t.Logf("  worse than BM25: %d of %d (%.1f %%)", len(worse), len(set.Queries), 100*float64(len(worse))/float64(len(set.Queries)))
		if showTasks { // off for the held-out sets: a set read while tuning is held out no more
			for _, m := range ours.misses {
				t.Logf("  miss: %s", m)
			}
			for _, w := range worse {
				t.Logf("  worse: %s", w)
			}
		}
		if ours.mrr < plain.mrr {
			t.Errorf("%s: MRR %.3f below plain BM25's %.3f", set.Name, ours.mrr, plain.mrr)
		}
	}
	return total
}

// heldOutTasks makes TestHeldOut print the tasks it misses and those BM25 ranks better, which
// it keeps to itself by default, so that tuning runs see only the aggregate figures.
var heldOutTasks = flag.Bool("heldout.tasks", false, "TestHeldOut: print the held-out tasks missed (not for tuning)")

func itoa(n int) string { return strconv.Itoa(n) }

func first(got []string) string {
	if len(got) == 0 {
		return "nothing"
	}
	return got[0]
}
