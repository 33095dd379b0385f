package results_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

var updateCorpus = flag.Bool("update", false, "rewrite testdata/corpus.txt (TestCorpus)")

// corpusEntry is one file of testdata/corpus: a real tools/call result, captured by
// integration's TestResultCorpus (go test ./integration -run '^TestResultCorpus$' -args
// -update-corpus).
type corpusEntry struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	App       bool            `json:"app"`
	Result    json.RawMessage `json:"result"` // as the server sent it
}

// TestCorpus flattens every result of the corpus of real servers' results as package
// bridge does (the structured content's raw bytes, App tools as Apps) and checks that no
// fact is lost: every word and number of every dropped block is in what the model reads.
// It records, per result, the bytes the model reads with every block, with the rule before
// this check (a block dropped only when it equals the whole structured content) and now,
// and what it reads now, in testdata/corpus.txt (-update rewrites it; any change shows as
// a diff there). With -v it prints the totals.
func TestCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in testdata/corpus: %v", err)
	}
	var report strings.Builder
	var all, old, now, withStructured int
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var e corpusEntry
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(e.Result, &res); err != nil {
			t.Fatalf("%s: decoding the result: %v", path, err)
		}
		var raw struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(e.Result, &raw); err != nil {
			t.Fatal(err)
		}
		got, err := results.Flatten(&res, &results.Options{MaxBytes: -1, App: e.App, Structured: raw.StructuredContent})
		if err != nil && !res.IsError {
			t.Fatalf("%s: %v", name, err)
		}
		checkNoFactLost(t, &res, got)
		every, before := baselines(t, &res, e.App, raw.StructuredContent)
		if res.StructuredContent != nil && !e.App {
			withStructured++
		}
		all, old, now = all+len(every), old+len(before), now+len(got)
		fmt.Fprintf(&report, "## %s (%s %s)\nevery block %d B, whole-echo rule %d B, now %d B\n%s\n\n", name, e.Server, e.Tool, len(every), len(before), len(got), got)
	}
	summary := fmt.Sprintf("# %d results (%d with structured content, not App tools)\n# what the model reads: every block %d B, whole-echo rule %d B, now %d B: %d B saved (%d B on the whole-echo rule)\n\n",
		len(paths), withStructured, all, old, now, all-now, old-now)
	t.Log(strings.TrimSpace(summary))
	text := summary + report.String()
	golden := filepath.Join("testdata", "corpus.txt")
	if *updateCorpus {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./results -run TestCorpus -update)", err)
	}
	if string(want) != text {
		t.Errorf("what the model reads of the corpus changed; review with go test ./results -run TestCorpus -update && git diff")
	}

	// The two cases read once.
	for _, name := range []string{"filesystem.read_text_file", "memory.read_graph", "memory.create_entities"} {
		if !strings.Contains(report.String(), "## "+name+" ") {
			t.Errorf("the corpus lacks %s", name)
		}
	}
}

// baselines returns what the model reads of res with every text block kept, and under the
// rule before the copy check (a block dropped only when it is the whole structured content
// in any formatting).
func baselines(t *testing.T, res *mcp.CallToolResult, app bool, raw json.RawMessage) (every, before string) {
	t.Helper()
	if app || res.StructuredContent == nil {
		s, _ := results.Flatten(res, &results.Options{MaxBytes: -1, App: app})
		return s, s
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	every, before = b.String(), b.String()
	for _, c := range res.Content {
		one := &mcp.CallToolResult{Content: []mcp.Content{c}}
		s, _ := results.Flatten(one, &results.Options{MaxBytes: -1})
		if s == `{"content":[]}` || strings.HasPrefix(s, `{"content":[{"type":"text"`) {
			continue // blank
		}
		every += "\n" + s
		if tc, ok := c.(*mcp.TextContent); ok {
			var v any
			if json.Unmarshal([]byte(tc.Text), &v) == nil && reflect.DeepEqual(v, res.StructuredContent) {
				continue
			}
		}
		before += "\n" + s
	}
	return every, before
}
