package apps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
)

// A host decides, per listed tool, whether the model sees it and which UI renders it.
func Example() {
	// _meta as go-sdk decodes it from the system-monitor example server's tools/list.
	tools := map[string]mcp.Meta{
		"get-system-info": {
			"ui":             map[string]any{"resourceUri": "ui://system-monitor/mcp-app.html"},
			"ui/resourceUri": "ui://system-monitor/mcp-app.html",
		},
		"poll-system-stats": {"ui": map[string]any{"visibility": []any{"app"}}},
		"echo":              nil,
	}
	for _, name := range []string{"get-system-info", "poll-system-stats", "echo"} {
		ui, problems := apps.ParseToolUI(tools[name])
		fmt.Printf("%s: app=%v model=%v callable-by-app=%v uri=%q problems=%d\n",
			name, ui.IsApp(), ui.ModelVisible(), ui.AppCallable(), ui.ResourceURI, len(problems))
	}
	// Output:
	// get-system-info: app=true model=true callable-by-app=true uri="ui://system-monitor/mcp-app.html" problems=0
	// poll-system-stats: app=false model=false callable-by-app=true uri="" problems=0
	// echo: app=false model=true callable-by-app=true uri="" problems=0
}

func ExampleServerHash() {
	fmt.Println(apps.ServerHash("http", "http://localhost:3001/mcp"))
	fmt.Println(apps.ServerHash("sse", "http://localhost:3001/sse"))
	fmt.Println(apps.StdioHash("npx", []string{"-y", "@modelcontextprotocol/server-everything"}))
	// Output:
	// 2637fef21d2e2f89aa11b1d288fbe14d
	// 46aeb65599c71f7cdfc103453dd7ed7e
	// 1d8aa2bf5ca625e0a81d81614554fa72
}

func ExampleParseToolUI() {
	meta := mcp.Meta{"ui": map[string]any{"resourceUri": "http://x", "visibility": []any{"model", "foo"}}}
	ui, problems := apps.ParseToolUI(meta)
	fmt.Printf("uri=%q model=%v app=%v\n", ui.ResourceURI, ui.ModelVisible(), ui.AppCallable())
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// uri="" model=true app=false
	// _meta.ui.resourceUri "http://x" does not start with ui://
	// visibility contains unknown value "foo"
}

// servers is a stand-in for bridge.Tools, which implements apps.Proxier for real.
type servers map[string]string // server hash → canned result

func (s servers) Proxy(_ context.Context, req apps.ProxyRequest) (json.RawMessage, error) {
	res, ok := s[req.ServerHash]
	if !ok {
		return nil, fmt.Errorf("%w: %q", apps.ErrUnknownServer, req.ServerHash)
	}
	return json.RawMessage(res), nil
}

func ExampleNewHandler() {
	hash := apps.ServerHash("http", "http://localhost:3001/mcp")
	mux := http.NewServeMux()
	mux.Handle("POST /mcp-proxy", apps.NewHandler(servers{hash: `{"content":[{"type":"text","text":"12:00"}]}`}, nil))

	for _, body := range []string{
		`{"serverHash":"` + hash + `","method":"tools/call","params":{"name":"get-time"}}`,
		`{"serverHash":"nope","method":"tools/call","params":{"name":"get-time"}}`,
		`{"serverHash":"` + hash + `","method":"tools/list"}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp-proxy", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
		if !strings.HasSuffix(rec.Body.String(), "\n") {
			fmt.Println()
		}
	}
	// Output:
	// 200 {"content":[{"type":"text","text":"12:00"}]}
	// 404 {"error":"unknown server: \"nope\""}
	// 403 {"error":"method not allowed for UI proxy: \"tools/list\""}
}
