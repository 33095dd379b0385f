package toolsearch_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

func fixedDocs() []toolsearch.Document {
	return []toolsearch.Document{
		{Name: "create_pull_request", Description: "Create a new pull request in a GitHub repository", Server: "github"},
		{Name: "merge_pull_request", Description: "Merge a pull request", Server: "github"},
		{Name: "list_issues", Description: "List issues in a GitHub repository", Server: "github"},
		{Name: "gitlab__create_issue", Description: "Create a new issue in a GitLab project", Server: "gitlab"},
		{Name: "create_issue", Description: "Create a new issue in a GitHub repository", Server: "github"},
		{Name: "getUserProfile", Description: "Profile of one user.", Server: "slack", Params: []toolsearch.Param{{Name: "user_id", Description: "The user's ID"}}},
		{Name: "take_screenshot", Description: "Capture the page as an image.", Server: "chrome-devtools"},
		{Name: "create_directory", Description: "Create a new directory.", Server: "desktop-commander"},
		{Name: "query-docs", Description: "Retrieves documentation for a library.", Server: "context7",
			Instructions: "Use this server to fetch current documentation whenever the user asks about a library."},
		{Name: "get_build_failure_logs", Description: "Retrieves logs of a failed build.", Server: "circleci"},
	}
}

// Fixed cases: what each part of the ranking is for.
func TestSearchRanking(t *testing.T) {
	ix := toolsearch.New(fixedDocs())
	for _, tc := range []struct {
		query, first string
		why          string
	}{
		{"merge a GitHub pull request", "merge_pull_request", "name coverage beats a description that repeats the server name"},
		{"open a new issue on GitHub", "create_issue", "a named server beats another server's same tool"},
		{"open a new issue on GitLab", "gitlab__create_issue", "…either way"},
		{"user profile", "getUserProfile", "camelCase names are split"},
		{"take a screen shot of the page", "take_screenshot", "words of the name"},
		{"make a folder", "create_directory", "related words: make ~ create, folder ~ directory"},
		{"why did the build fail", "get_build_failure_logs", "prefix: fail → failure"},
		{"library documentation", "query-docs", "kebab-case and instructions"},
		{"LIST ISSUES", "list_issues", "case and plural folded"},
	} {
		hits := ix.Search(tc.query, 3)
		if len(hits) == 0 || hits[0].Name != tc.first {
			t.Errorf("Search(%q) = %v, want %s first (%s)", tc.query, hits, tc.first, tc.why)
		}
	}
	for _, q := range []string{"", "   ", "the of and", "🙂", "\xff\xfe"} {
		if hits := ix.Search(q, 5); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want nothing", q, hits)
		}
	}
	if hits := ix.Search("issue", 1); len(hits) != 1 {
		t.Errorf("k=1 gave %d hits", len(hits))
	}
	if all, two := ix.Search("issue", 0), ix.Search("issue", 2); len(all) < 3 || !reflect.DeepEqual(all[:2], two) {
		t.Errorf("k<=0 should give every match, in the same order: %v vs %v", all, two)
	}
	twins := toolsearch.New([]toolsearch.Document{{Name: "b", Description: "same words"}, {Name: "a", Description: "same words"}})
	if hits := twins.Search("words", 2); len(hits) != 2 || hits[0].Doc != 0 || hits[1].Doc != 1 {
		t.Errorf("ties must keep document order: %v", hits)
	}
	if got := toolsearch.New(nil).Search("issue", 3); got != nil {
		t.Errorf("empty index: %v", got)
	}
}

// TestServerPrior: among tools that match a task alike, the one whose server's tools have
// more of the task's words ranks first, whatever the document order.
func TestServerPrior(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Document{
		{Name: "add_comment", Description: "Add a comment.", Server: "tracker"},
		{Name: "transition_ticket", Description: "Move a ticket to another status.", Server: "tracker"},
		{Name: "add_comment", Description: "Add a comment.", Server: "forge"},
		{Name: "merge_pull_request", Description: "Merge a pull request.", Server: "forge"},
	})
	for _, tc := range []struct {
		query string
		first int
	}{
		{"comment on the pull request before the review", 2},
		{"comment on the ticket before closing it", 0},
	} {
		var comments []int
		for _, h := range ix.Search(tc.query, 0) {
			if h.Name == "add_comment" {
				comments = append(comments, h.Doc)
			}
		}
		if len(comments) != 2 || comments[0] != tc.first {
			t.Errorf("Search(%q): add_comment documents in order %v, want %d first", tc.query, comments, tc.first)
		}
	}
}

// TestOtherAction: a tool whose name says another act than any the task asks for (create
// for a task that reads) ranks below one that matches alike and says no act against it.
func TestOtherAction(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Document{
		{Name: "create_branch", Description: "Create a branch.", Server: "forge"},
		{Name: "branch_contents", Description: "Files of a branch.", Server: "forge"},
	})
	for _, tc := range []struct{ query, first string }{
		{"read the release branch", "branch_contents"},
		{"add a release branch", "create_branch"},
		{"the release branch", "create_branch"}, // no act asked for: document order
	} {
		if hits := ix.Search(tc.query, 2); len(hits) == 0 || hits[0].Name != tc.first {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, hits, tc.first)
		}
	}
}

// TestOtherToolNamed: a description that names another tool ("call page_snapshot first")
// does not match that tool's words, but for the exact-word bonus; the tool's own name in its
// description still does.
func TestOtherToolNamed(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Document{
		{Name: "element_click", Description: "Click an element. Call PAGE_SNAPSHOT first to find it.", Server: "browser"},
		{Name: "page_snapshot", Description: "The accessibility tree of the page; page_snapshot is cheap.", Server: "browser"},
		{Name: "fill", Description: "Fill a field found with element_click or by its label.", Server: "browser"},
	})
	for _, tc := range []struct{ query, first, other string }{
		{"snapshot", "page_snapshot", "element_click"},
		{"click", "element_click", "fill"},
		{"cheap", "page_snapshot", ""},
	} {
		hits := ix.Search(tc.query, 0)
		if len(hits) == 0 || hits[0].Name != tc.first {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, hits, tc.first)
			continue
		}
		for _, h := range hits[1:] {
			if h.Name == tc.other && h.Score > hits[0].Score/10 {
				t.Errorf("Search(%q): %s scores %.2f, more than a tenth of %s's %.2f", tc.query, h.Name, h.Score, hits[0].Name, hits[0].Score)
			}
		}
	}
}

// The same documents and query give the same hits in the same order, whichever index built
// them and however often they are asked.
func TestSearchIsDeterministic(t *testing.T) {
	docs := sweepDocs(t)
	a, b := toolsearch.New(docs), toolsearch.New(docs)
	for _, q := range queries(t, "testdata/queries.json")[:40] {
		want := a.Search(q.Query, 10)
		for range 3 {
			if got := b.Search(q.Query, 10); !reflect.DeepEqual(got, want) {
				t.Fatalf("Search(%q) differs between runs:\n%v\n%v", q.Query, got, want)
			}
		}
	}
}

// TestSearchConcurrent: searches of different queries at once on one index, which reuses
// its scratch buffers from search to search, give what each query gives alone on an index
// of its own.
func TestSearchConcurrent(t *testing.T) {
	docs := sweepDocs(t)
	qs := queries(t, "testdata/queries.json")[:24]
	want := make([][]toolsearch.Hit, len(qs))
	for i, q := range qs {
		want[i] = toolsearch.New(docs).Search(q.Query, 10)
	}
	shared := toolsearch.New(docs)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 3 {
				for i := range qs {
					j := (i + 5*g + r) % len(qs)
					if got := shared.Search(qs[j].Query, 10); !reflect.DeepEqual(got, want[j]) {
						t.Errorf("Search(%q) beside other searches:\n%v\nalone:\n%v", qs[j].Query, got, want[j])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"owner":{"type":"string","description":"Repository owner"},
		"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string","title":"Path","description":"File path"}}}},
		"opts":{"anyOf":[{"type":"object","properties":{"deep":{"description":"Go deep"}}},{"type":"null"}]},
		"weird":{"description":42},
		"n":true,
		"mode":{"type":"string","description":"Travel mode","enum":["driving","walking",3,"transit"]},
		"flag":{"enum":"not an array"}
	}}`)
	want := []toolsearch.Param{
		{Name: "owner", Description: "Repository owner"},
		{Name: "files"},
		{Name: "opts"},
		{Name: "weird"},
		{Name: "n"},
		{Name: "mode", Description: "Travel mode (driving, walking, transit)"},
		{Name: "flag"},
		{Name: "path", Description: "Path. File path"},
		{Name: "deep", Description: "Go deep"},
	}
	if got := toolsearch.Params(schema); !reflect.DeepEqual(got, want) {
		t.Errorf("Params = %+v\nwant     %+v", got, want)
	}
	for _, bad := range []string{``, `null`, `[]`, `"x"`, `{"properties":[]}`, `{"properties":{"a":`, `{`} {
		if got := toolsearch.Params(json.RawMessage(bad)); len(got) != 0 {
			t.Errorf("Params(%s) = %v", bad, got)
		}
	}
	deep := strings.Repeat(`{"properties":{"a":`, 50) + `{}` + strings.Repeat(`}}`, 50)
	if got := toolsearch.Params(json.RawMessage(deep)); len(got) != 5 {
		t.Errorf("Params of a 50-deep schema gave %d params, want 5 (depth bound)", len(got))
	}
	var many strings.Builder
	many.WriteString(`{"properties":{`)
	for i := range 500 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"p%d":{}`, i)
	}
	many.WriteString(`}}`)
	if got := toolsearch.Params(json.RawMessage(many.String())); len(got) != 200 {
		t.Errorf("Params of 500 properties gave %d, want 200", len(got))
	}
}

// TestParamsOnePass: Params reads every schema of the sweep and of the unseen servers as
// decoding each level of it did before.
func TestParamsOnePass(t *testing.T) {
	for _, file := range []string{"testdata/sweep.json", "testdata/unseen.json"} {
		for _, schema := range rawSchemas(t, file) {
			if got, want := toolsearch.Params(schema), oldParams(schema); !sameParams(got, want) {
				t.Errorf("%s: Params = %v\nwant %v", file, got, want)
			}
		}
	}
}

func sameParams(a, b []toolsearch.Param) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func FuzzParams(f *testing.F) {
	for _, s := range []string{`{"properties":{"a":{"description":"x","properties":{"b":{}}}}}`, `{"items":{"properties":{"c":{}}}}`, `{"anyOf":[{"properties":{"d":{}}}]}`, `{"properties":{"e":{"enum":["x",1,null,"y"],"ENUM":["z"]}}}`, `{`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := toolsearch.Params(json.RawMessage(s))
		if len(got) > 200 {
			t.Fatalf("%d params", len(got))
		}
		// On valid JSON, the one-pass reader finds what decoding each level did.
		if json.Valid([]byte(s)) && !sameParams(got, oldParams(json.RawMessage(s))) {
			t.Fatalf("Params(%s) = %v, decoding each level gives %v", s, got, oldParams(json.RawMessage(s)))
		}
	})
}

// Whatever a server writes and a user asks, indexing and search return, hits are valid
// documents in score order, and a document still finds itself by a word of its name.
func FuzzSearch(f *testing.F) {
	f.Add("get_pull_request", "Get details of a PR.", "pull request")
	f.Add("HTTPServer2Go", "\xff\xfeStart\u202e it", "start http server")
	f.Add("", "", "")
	f.Add("open_url", "See https://u:p@www.example.com:8080/a/b?c=d#e, ://x and a://", "open http://a.b/c then look up https://")
	f.Add(strings.Repeat("a", 100), strings.Repeat("word ", 1000), strings.Repeat("q ", 200))
	f.Fuzz(func(t *testing.T, name, desc, query string) {
		docs := append(fixedDocs(), toolsearch.Document{Name: "xylophone_" + name, Description: desc, Server: "fuzz"})
		ix := toolsearch.New(docs)
		hits := ix.Search(query, 0)
		for i, h := range hits {
			if h.Doc < 0 || h.Doc >= len(docs) || h.Name != docs[h.Doc].Name || h.Score <= 0 {
				t.Fatalf("bad hit %+v", h)
			}
			if i > 0 && (h.Score > hits[i-1].Score || h.Score == hits[i-1].Score && h.Doc < hits[i-1].Doc) {
				t.Fatalf("hits out of order: %v", hits)
			}
		}
		if self := ix.Search("xylophone", 0); len(self) == 0 || self[0].Doc != len(docs)-1 {
			t.Fatalf("the fuzzed document does not find itself by a word of its name: %v", self)
		}
	})
}
