package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parseToolUITests give _meta as JSON text, so that a case is decoded exactly like a server
// would send it: by encoding/json here, and by a real go-sdk client in TestParseToolUIFromServer.
var parseToolUITests = []struct {
	name         string
	meta         string // "" = nil meta
	wantURI      string
	wantVis      []string // nil = absent
	wantModel    bool
	wantApp      bool
	wantProblems []string // substrings, one per expected problem, in order
}{
	{name: "nil meta", meta: "", wantModel: true, wantApp: true},
	{name: "empty meta", meta: `{}`, wantModel: true, wantApp: true},
	{name: "unrelated keys", meta: `{"vendor/x":{"k":1},"progressToken":3}`, wantModel: true, wantApp: true},
	{name: "nested", meta: `{"ui":{"resourceUri":"ui://get-time/mcp-app.html"}}`, wantURI: "ui://get-time/mcp-app.html", wantModel: true, wantApp: true},
	{name: "flat legacy", meta: `{"ui/resourceUri":"ui://legacy/app.html"}`, wantURI: "ui://legacy/app.html", wantModel: true, wantApp: true},
	{name: "both as registerAppTool writes them", meta: `{"ui":{"resourceUri":"ui://get-time/mcp-app.html"},"ui/resourceUri":"ui://get-time/mcp-app.html"}`,
		wantURI: "ui://get-time/mcp-app.html", wantModel: true, wantApp: true},
	{name: "both differ: nested wins", meta: `{"ui":{"resourceUri":"ui://new"},"ui/resourceUri":"ui://old"}`,
		wantURI: "ui://new", wantModel: true, wantApp: true, wantProblems: []string{`"ui://new" and _meta["ui/resourceUri"] "ui://old" differ`}},
	{name: "nested non-string", meta: `{"ui":{"resourceUri":42}}`,
		wantModel: true, wantApp: true, wantProblems: []string{"_meta.ui.resourceUri is a number"}},
	{name: "nested object", meta: `{"ui":{"resourceUri":{"uri":"ui://x"}}}`,
		wantModel: true, wantApp: true, wantProblems: []string{"_meta.ui.resourceUri is an object"}},
	{name: "nested non-string falls back to flat", meta: `{"ui":{"resourceUri":true},"ui/resourceUri":"ui://flat"}`,
		wantURI: "ui://flat", wantModel: true, wantApp: true, wantProblems: []string{"_meta.ui.resourceUri is a boolean"}},
	{name: "flat non-string", meta: `{"ui/resourceUri":["ui://x"]}`,
		wantModel: true, wantApp: true, wantProblems: []string{`_meta["ui/resourceUri"] is an array`}},
	{name: "non-ui scheme", meta: `{"ui":{"resourceUri":"http://x"}}`,
		wantModel: true, wantApp: true, wantProblems: []string{`resourceUri "http://x" does not start with ui://`}},
	{name: "scheme is case-sensitive", meta: `{"ui/resourceUri":"UI://x"}`,
		wantModel: true, wantApp: true, wantProblems: []string{`_meta["ui/resourceUri"] "UI://x" does not start with ui://`}},
	{name: "nulls are absent", meta: `{"ui":{"resourceUri":null,"visibility":null},"ui/resourceUri":null}`, wantModel: true, wantApp: true},
	{name: "null ui", meta: `{"ui":null}`, wantModel: true, wantApp: true},
	{name: "ui not an object", meta: `{"ui":"ui://x"}`,
		wantModel: true, wantApp: true, wantProblems: []string{"_meta.ui is a string, want an object"}},
	{name: "visibility app only without resource (system-monitor poll-system-stats)", meta: `{"ui":{"visibility":["app"]}}`,
		wantVis: []string{"app"}, wantModel: false, wantApp: true},
	{name: "visibility model only", meta: `{"ui":{"resourceUri":"ui://a","visibility":["model"]}}`,
		wantURI: "ui://a", wantVis: []string{"model"}, wantModel: true, wantApp: false},
	{name: "visibility both explicit", meta: `{"ui":{"visibility":["model","app"]}}`,
		wantVis: []string{"model", "app"}, wantModel: true, wantApp: true},
	{name: "visibility empty", meta: `{"ui":{"resourceUri":"ui://a","visibility":[]}}`,
		wantURI: "ui://a", wantVis: []string{}, wantModel: false, wantApp: false},
	{name: "visibility a string", meta: `{"ui":{"visibility":"app"}}`,
		wantVis: []string{"app"}, wantModel: false, wantApp: true, wantProblems: []string{`_meta.ui.visibility is a string, want an array; read as ["app"]`}},
	{name: "visibility non-array", meta: `{"ui":{"visibility":{"model":true}}}`,
		wantVis: []string{}, wantModel: false, wantApp: false, wantProblems: []string{"_meta.ui.visibility is an object, want an array"}},
	{name: "visibility non-string entries and unknown value", meta: `{"ui":{"visibility":["model",3,null,"foo"]}}`,
		wantVis: []string{"model", "foo"}, wantModel: true, wantApp: false, wantProblems: []string{
			"_meta.ui.visibility[1] is a number", "_meta.ui.visibility[2] is null", `visibility contains unknown value "foo"`}},
	{name: "long value quoted bounded", meta: `{"ui":{"resourceUri":"http://` + strings.Repeat("x", 5000) + `"}}`,
		wantModel: true, wantApp: true, wantProblems: []string{`does not start with ui://`}},
}

func decodeMeta(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test meta %s: %v", s, err)
	}
	return m
}

func checkToolUI(t *testing.T, meta string, got ToolUI, problems []string, tt int) {
	t.Helper()
	want := parseToolUITests[tt]
	if got.ResourceURI != want.wantURI {
		t.Errorf("ParseToolUI(%.80s).ResourceURI = %q, want %q", meta, got.ResourceURI, want.wantURI)
	}
	if (got.Visibility == nil) != (want.wantVis == nil) || !slices.Equal(got.Visibility, want.wantVis) {
		t.Errorf("ParseToolUI(%.80s).Visibility = %#v, want %#v", meta, got.Visibility, want.wantVis)
	}
	if got.ModelVisible() != want.wantModel {
		t.Errorf("ParseToolUI(%.80s).ModelVisible() = %v, want %v", meta, got.ModelVisible(), want.wantModel)
	}
	if got.AppCallable() != want.wantApp {
		t.Errorf("ParseToolUI(%.80s).AppCallable() = %v, want %v", meta, got.AppCallable(), want.wantApp)
	}
	if got.IsApp() != (want.wantURI != "") {
		t.Errorf("ParseToolUI(%.80s).IsApp() = %v, want %v", meta, got.IsApp(), want.wantURI != "")
	}
	if len(problems) != len(want.wantProblems) {
		t.Fatalf("ParseToolUI(%.80s) problems = %q, want %d matching %q", meta, problems, len(want.wantProblems), want.wantProblems)
	}
	for i, p := range problems {
		if !strings.Contains(p, want.wantProblems[i]) {
			t.Errorf("ParseToolUI(%.80s) problem[%d] = %q, want it to contain %q", meta, i, p, want.wantProblems[i])
		}
		if len(p) > 400 {
			t.Errorf("ParseToolUI(%.80s) problem[%d] is %d bytes long, want a bounded quote", meta, i, len(p))
		}
	}
}

func TestParseToolUI(t *testing.T) {
	for i, tt := range parseToolUITests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := ParseToolUI(decodeMeta(t, tt.meta))
			checkToolUI(t, tt.meta, got, problems, i)
		})
	}
}

// TestParseToolUIGoValues covers metadata built in Go rather than decoded from JSON.
func TestParseToolUIGoValues(t *testing.T) {
	meta := mcp.Meta{"ui": mcp.Meta{"resourceUri": "ui://a", "visibility": []string{"app"}}}
	got, problems := ParseToolUI(meta)
	if got.ResourceURI != "ui://a" || !slices.Equal(got.Visibility, []string{"app"}) || len(problems) != 0 {
		t.Errorf("ParseToolUI(%v) = %+v, %q; want {ui://a [app]}, no problems", meta, got, problems)
	}
	_, problems = ParseToolUI(map[string]any{"ui": map[string]any{"resourceUri": 7}})
	if len(problems) != 1 || !strings.Contains(problems[0], "is a number") {
		t.Errorf("ParseToolUI(resourceUri int) problems = %q, want one saying it is a number", problems)
	}
}

// TestParseToolUIFromServer lists tools carrying each test case's _meta from a real go-sdk
// server, through a real go-sdk client over in-memory transports, and parses the _meta the
// client decoded.
func TestParseToolUIFromServer(t *testing.T) {
	ctx := t.Context()
	srv := mcp.NewServer(&mcp.Implementation{Name: "apps-test", Version: "v0.0.1"}, nil)
	for i, tt := range parseToolUITests {
		tool := &mcp.Tool{
			Name:        fmt.Sprintf("t%03d", i),
			Description: tt.name,
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Meta:        decodeMeta(t, tt.meta),
		}
		srv.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	defer ss.Close()
	cli := mcp.NewClient(&mcp.Implementation{Name: "apps-test-client", Version: "v0.0.1"}, nil)
	cs, err := cli.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	defer cs.Close()

	seen := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		i, err := strconv.Atoi(strings.TrimPrefix(tool.Name, "t"))
		if err != nil || i < 0 || i >= len(parseToolUITests) {
			t.Fatalf("unexpected tool %q", tool.Name)
		}
		seen++
		t.Run(parseToolUITests[i].name, func(t *testing.T) {
			got, problems := ParseToolUI(tool.Meta)
			checkToolUI(t, parseToolUITests[i].meta, got, problems, i)
		})
	}
	if seen != len(parseToolUITests) {
		t.Errorf("listed %d tools, want %d", seen, len(parseToolUITests))
	}
}

func FuzzParseToolUI(f *testing.F) {
	for _, tt := range parseToolUITests {
		f.Add(tt.meta)
	}
	f.Add(`{"ui":{"visibility":[[["model"]]],"resourceUri":{"a":[1,2]}},"ui/resourceUri":1e400}`)
	f.Add(`{"ui":[1,2,3]}`)
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		u, problems := ParseToolUI(m)
		if u.ResourceURI != "" && !strings.HasPrefix(u.ResourceURI, URIScheme) {
			t.Fatalf("ParseToolUI(%s).ResourceURI = %q, not a ui:// URI", s, u.ResourceURI)
		}
		for _, p := range problems {
			if p == "" {
				t.Fatalf("ParseToolUI(%s) returned an empty problem", s)
			}
		}
		_, _ = u.ModelVisible(), u.AppCallable()
	})
}

func BenchmarkParseToolUI(b *testing.B) {
	meta := map[string]any{
		"ui":             map[string]any{"resourceUri": "ui://get-time/mcp-app.html", "visibility": []any{"model", "app"}},
		"ui/resourceUri": "ui://get-time/mcp-app.html",
	}
	for b.Loop() {
		ParseToolUI(meta)
	}
}
