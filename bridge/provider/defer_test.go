package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

func deferTools(names ...string) []bridge.Tool {
	var out []bridge.Tool
	for _, n := range names {
		out = append(out, bridge.Tool{Name: n, Description: "Does " + strings.ReplaceAll(n, "_", " ") + ".", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
	}
	return out
}

// What stays loaded: Load globs, then Defer globs, then the server's setting, then the
// automatic threshold.
func TestDeferralPolicy(t *testing.T) {
	tools := deferTools("read_file", "write_file", "list_issues", "create_issue", "ping")
	cases := []struct {
		name string
		d    Deferral
		want string // 1 = deferred, per tool
	}{
		{"everything by default", Deferral{}, "11111"},
		{"load glob", Deferral{Load: []string{"*_file"}}, "00111"},
		{"defer glob under the threshold", Deferral{Defer: []string{"*issue*"}, MaxTools: 10}, "00110"},
		{"load wins over defer", Deferral{Load: []string{"list_*"}, Defer: []string{"*issue*"}, MaxTools: 10}, "00010"},
		{"over MaxTools", Deferral{MaxTools: 4}, "11111"},
		{"at MaxTools", Deferral{MaxTools: 5}, "00000"},
		{"over MaxTokens", Deferral{MaxTokens: 10}, "11111"},
		{"under MaxTokens", Deferral{MaxTokens: 100000}, "00000"},
		{"MaxTokens with a counter", Deferral{MaxTokens: 100, Count: func(s string) int { return len(s) }}, "11111"},
	}
	for _, tc := range cases {
		ts, err := New(FormatAnthropic, tools, &Options{Defer: &tc.d})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got strings.Builder
		for _, d := range ts.deferral.deferred {
			if d {
				got.WriteByte('1')
			} else {
				got.WriteByte('0')
			}
		}
		if got.String() != tc.want {
			t.Errorf("%s: deferred %s, want %s", tc.name, got.String(), tc.want)
		}
	}
	for _, bad := range []struct {
		f Format
		d Deferral
	}{
		{FormatOpenAI, Deferral{Search: SearchHosted}},
		{FormatGemini, Deferral{Search: SearchRegex}},
		{FormatOpenAIResponses, Deferral{Search: SearchRegex}},
		{FormatAnthropic, Deferral{Search: "semantic"}},
		{FormatAnthropic, Deferral{Load: []string{"[oops"}}},
	} {
		if _, err := New(bad.f, tools, &Options{Defer: &bad.d}); err == nil {
			t.Errorf("%s %+v: want an error", bad.f, bad.d)
		}
	}
	if _, err := New(FormatOpenAI, deferTools("search_tools"), &Options{Defer: &Deferral{}}); err == nil || !strings.Contains(err.Error(), "search tool") {
		t.Errorf("a tool named like the search tool: %v", err)
	}
}

func TestNamespaceNames(t *testing.T) {
	taken := map[string]bool{}
	for in, want := range map[string]string{"github": "github", "my.server": "my_server", "": "tools", "sérveur": "s_rveur"} {
		if got := namespaceName(in, taken); got != want {
			t.Errorf("namespaceName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := namespaceName("my/server", taken); got != "my_server_2" {
		t.Errorf("a clash gets a suffix: %q", got)
	}
	if got := namespaceName(strings.Repeat("x", 100), taken); len(got) > 64 {
		t.Errorf("%d bytes", len(got))
	}
}

func TestParseSearchArgs(t *testing.T) {
	for in, want := range map[string]searchArgs{
		`{"query":"open an issue"}`:               {Query: "open an issue"},
		`"{\"query\":\"as text\"}"`:               {Query: "as text"},
		`{"paths":["github","x.create"],"q":1}`:   {Paths: []string{"github", "x.create"}},
		`{"query":"q","limit":3}`:                 {Query: "q", Limit: 3},
		`{"query":"q","max_results":2,"more":{}}`: {Query: "q", Limit: 2},
	} {
		got, err := parseSearchArgs(json.RawMessage(in))
		if err != nil || got.Query != want.Query || got.Limit != want.Limit || strings.Join(got.Paths, ",") != strings.Join(want.Paths, ",") {
			t.Errorf("parseSearchArgs(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `null`, `[]`, `{}`, `{"query":""}`, `{"query":5}`, `{"paths":[1]}`, `"not json"`, `{`} {
		if _, err := parseSearchArgs(json.RawMessage(bad)); err == nil {
			t.Errorf("parseSearchArgs(%s): want an error", bad)
		}
	}
	long, _ := parseSearchArgs(json.RawMessage(`{"query":"` + strings.Repeat("a", 5000) + `"}`))
	if len(long.Query) != maxSearchQuery {
		t.Errorf("a long query is kept at %d bytes", len(long.Query))
	}
}

// A model's search arguments are untrusted: any bytes give arguments within bounds or an
// error, and searching with them returns deferred tools only, at most Results of them
// beyond those named by path.
func FuzzSearchCall(f *testing.F) {
	for _, s := range []string{`{"query":"issue"}`, `{"paths":["tools","write_file"]}`, `"{\"query\":\"x\"}"`, `{"query":"a","limit":999999}`, `{"paths":[]}`} {
		f.Add(s)
	}
	ts, err := New(FormatAnthropic, deferTools("read_file", "write_file", "list_issues", "create_issue", "ping"), &Options{Defer: &Deferral{Load: []string{"ping"}, Results: 2}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := parseSearchArgs(json.RawMessage(raw))
		if err != nil {
			return
		}
		if len(a.Query) > maxSearchQuery || len(a.Paths) > maxSearchPaths {
			t.Fatalf("unbounded: %d, %d", len(a.Query), len(a.Paths))
		}
		r := ts.Run(t.Context(), Call{ID: "c", Name: searchToolName, Arguments: json.RawMessage(raw)})
		for _, n := range r.Loaded {
			if n == "ping" {
				t.Fatalf("a loaded tool came back from a search: %v", r.Loaded)
			}
		}
		if len(r.Loaded) > 4 {
			t.Fatalf("%d tools loaded", len(r.Loaded))
		}
		if msg := ts.ResultMessage(r); !json.Valid(msg) {
			t.Fatalf("result message is not JSON: %s", msg)
		}
	})
}
