package integration

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

const (
	getTimeUI       = "ui://get-time/mcp-app.html"
	systemMonitorUI = "ui://system-monitor/mcp-app.html"
	appMIMEType     = "text/html;profile=mcp-app"
)

// TestAppServers runs the MCP Apps examples server-basic-vanillajs and server-system-monitor
// over stdio: App tool marking, app-only visibility, the frontend proxy, UI resources and the
// OnAppResult activity.
func TestAppServers(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	var mu sync.Mutex
	var activities []apps.Activity
	opts := &bridge.Options{OnAppResult: func(_ context.Context, a apps.Activity) {
		mu.Lock()
		defer mu.Unlock()
		activities = append(activities, a)
	}}
	set := connect(t, ctx, []bridge.ServerConfig{
		s.stdio("basic", pkgBasicVanillaJS, "--stdio"),
		s.stdio("monitor", pkgSystemMonitor, "--stdio"),
	}, opts)
	tools := set.Tools()
	basic, ok := set.Lookup("basic")
	if !ok {
		t.Fatal("Lookup(basic) failed")
	}
	monitor, ok := set.Lookup("monitor")
	if !ok {
		t.Fatal("Lookup(monitor) failed")
	}
	if basic.Hash() == "" || basic.Hash() == monitor.Hash() {
		t.Errorf("server hashes %q and %q: want distinct and non-empty", basic.Hash(), monitor.Hash())
	}

	t.Run("App tools are marked", func(t *testing.T) {
		tests := []struct {
			server, tool, desc, uri string
		}{
			{"basic", "get-time", "Returns the current server time as an ISO 8601 string.", getTimeUI},
			{"monitor", "get-system-info", "Returns system information, including hostname, platform, CPU info, and memory.", systemMonitorUI},
		}
		for _, tc := range tests {
			tool := findTool(t, tools, tc.server, tc.tool)
			if tool.UIResource != tc.uri {
				t.Errorf("%s UIResource = %q, want %q", tc.tool, tool.UIResource, tc.uri)
			}
			if want := tc.desc + "\n[UI Resource: " + tc.uri + "]"; tool.Description != want {
				t.Errorf("%s Description = %q, want %q", tc.tool, tool.Description, want)
			}
		}
	})

	t.Run("app-only tool hidden from the model", func(t *testing.T) {
		if hasRemote(tools, "monitor", "poll-system-stats") {
			t.Errorf("poll-system-stats (visibility [app]) is among the model's tools %v", toolNames(tools))
		}
		for _, tool := range monitor.Tools() {
			if tool.RemoteName == "poll-system-stats" {
				t.Errorf("poll-system-stats is in Server.Tools()")
			}
		}
	})

	t.Run("proxy", func(t *testing.T) {
		tests := []struct {
			name  string
			req   apps.ProxyRequest
			check func(t *testing.T, res json.RawMessage)
		}{
			{
				name: "app-only tool by server ID",
				req: apps.ProxyRequest{ServerID: "monitor", Method: "tools/call",
					Params: json.RawMessage(`{"name":"poll-system-stats","arguments":{}}`)},
				check: checkToolResult,
			},
			{
				name: "app-only tool by server hash",
				req: apps.ProxyRequest{ServerHash: monitor.Hash(), Method: "tools/call",
					Params: json.RawMessage(`{"name":"poll-system-stats","arguments":{}}`)},
				check: checkToolResult,
			},
			{
				name:  "UI resource",
				req:   apps.ProxyRequest{ServerID: "monitor", Method: "resources/read", Params: json.RawMessage(`{"uri":"` + systemMonitorUI + `"}`)},
				check: checkHTMLResource(systemMonitorUI),
			},
			{
				name:  "UI resource by hash",
				req:   apps.ProxyRequest{ServerHash: basic.Hash(), Method: "resources/read", Params: json.RawMessage(`{"uri":"` + getTimeUI + `"}`)},
				check: checkHTMLResource(getTimeUI),
			},
			{
				name:  "ping",
				req:   apps.ProxyRequest{ServerID: "basic", Method: "ping"},
				check: func(t *testing.T, res json.RawMessage) {},
			},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res, err := set.Proxy(ctx, tc.req)
				if err != nil {
					t.Fatalf("Proxy(%+v): %v", tc.req, err)
				}
				tc.check(t, res)
			})
		}
		refused := []struct {
			name string
			req  apps.ProxyRequest
		}{
			{"method not allowed", apps.ProxyRequest{ServerID: "monitor", Method: "tools/list"}},
			{"unknown server", apps.ProxyRequest{ServerID: "nope", Method: "ping"}},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				if res, err := set.Proxy(ctx, tc.req); err == nil {
					t.Errorf("Proxy(%+v) = %s, want an error", tc.req, res)
				}
			})
		}
	})

	t.Run("Server.ReadResource", func(t *testing.T) {
		res, err := basic.ReadResource(ctx, getTimeUI)
		if err != nil {
			t.Fatalf("ReadResource: %v", err)
		}
		if len(res.Contents) == 0 {
			t.Fatal("ReadResource: no contents")
		}
		c := res.Contents[0]
		if c.URI != getTimeUI || c.MIMEType != appMIMEType || !strings.Contains(strings.ToLower(c.Text), "<html") {
			t.Errorf("ReadResource contents[0] = uri %q, mime %q, %d bytes of text", c.URI, c.MIMEType, len(c.Text))
		}
	})

	t.Run("OnAppResult", func(t *testing.T) {
		mu.Lock()
		before := len(activities)
		mu.Unlock()
		calls := []struct {
			server, tool string
			srv          *bridge.Server
			uri          string
		}{
			{"basic", "get-time", basic, getTimeUI},
			{"monitor", "get-system-info", monitor, systemMonitorUI},
		}
		for _, c := range calls {
			tool := findTool(t, tools, c.server, c.tool)
			out, err := tool.Handler(ctx, json.RawMessage(`{}`))
			if err != nil || out == "" {
				t.Fatalf("%s = %q, %v", c.tool, out, err)
			}
		}
		// Once more with no arguments: the model reads content (an ISO time), not structuredContent.
		out, err := findTool(t, tools, "basic", "get-time").Handler(ctx, nil)
		if _, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(out)); err != nil || perr != nil {
			t.Errorf("get-time = %q, %v: want the content text, an ISO time (%v)", out, err, perr)
		}
		mu.Lock()
		got := append([]apps.Activity(nil), activities[before:]...)
		mu.Unlock()
		if len(got) != 3 {
			t.Fatalf("OnAppResult called %d times for 3 App tool calls: %+v", len(got), got)
		}
		for i, c := range append(calls, calls[0]) {
			a := got[i]
			if a.ServerHash != c.srv.Hash() || a.ServerID != c.server || a.ResourceURI != c.uri {
				t.Errorf("activity %d = {serverHash %q, serverId %q, resourceUri %q}, want {%q, %q, %q}",
					i, a.ServerHash, a.ServerID, a.ResourceURI, c.srv.Hash(), c.server, c.uri)
			}
			if a.Result == nil || len(a.Result.Content) == 0 || a.Result.StructuredContent == nil {
				t.Errorf("activity %d result = %+v, want the full CallToolResult", i, a.Result)
			}
			var input map[string]any
			if err := json.Unmarshal(a.ToolInput, &input); err != nil || len(input) != 0 {
				t.Errorf("activity %d toolInput = %s, want {}", i, a.ToolInput)
			}
		}
	})
}

// checkToolResult checks that a proxied tools/call result is a successful CallToolResult.
func checkToolResult(t *testing.T, res json.RawMessage) {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatalf("result %s: %v", res, err)
	}
	if r.IsError || len(r.Content) == 0 || r.Content[0].Text == "" || len(r.StructuredContent) == 0 {
		t.Errorf("tools/call result = %.300s, want content and structuredContent", res)
	}
}

// checkHTMLResource checks a proxied resources/read result for an MCP App's HTML.
func checkHTMLResource(uri string) func(t *testing.T, res json.RawMessage) {
	return func(t *testing.T, res json.RawMessage) {
		t.Helper()
		var r struct {
			Contents []struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatalf("result %.300s: %v", res, err)
		}
		if len(r.Contents) == 0 {
			t.Fatalf("resources/read result %.300s: no contents", res)
		}
		c := r.Contents[0]
		if c.URI != uri || c.MIMEType != appMIMEType || !strings.Contains(strings.ToLower(c.Text), "<html") {
			t.Errorf("contents[0] = uri %q, mime %q, %d bytes of text; want %q, %q, HTML", c.URI, c.MIMEType, len(c.Text), uri, appMIMEType)
		}
	}
}
