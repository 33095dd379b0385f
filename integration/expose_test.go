package integration

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestEverythingExposesResourcesAndPrompts turns server-everything's resources and prompts
// into tools (expose: [resources, prompts]) and calls each through BeforeCall and AfterCall.
func TestEverythingExposesResourcesAndPrompts(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	var mu sync.Mutex
	var audit []string
	cfg := s.stdio("everything", pkgEverything, "stdio")
	cfg.Expose = []string{bridge.ExposeResources, bridge.ExposePrompts}
	set := connect(t, ctx, []bridge.ServerConfig{cfg}, &bridge.Options{
		Logger: testLogger(t),
		BeforeCall: func(_ context.Context, c *bridge.Call) error {
			if c.RemoteName == "echo" {
				return bridge.Deny("echo is not for this agent")
			}
			return nil
		},
		AfterCall: func(_ context.Context, c *bridge.Call, end *bridge.CallEnd) {
			mu.Lock()
			defer mu.Unlock()
			audit = append(audit, c.Method+" "+string(end.Outcome))
		},
	})
	tool := func(name string) bridge.Tool {
		t.Helper()
		for _, tl := range set.Tools() {
			if tl.Name == name {
				return tl
			}
		}
		t.Fatalf("no tool %q in %v", name, toolNames(set.Tools()))
		return bridge.Tool{}
	}
	tests := []struct {
		tool, args string
		want       []string
	}{
		{"everything__list_resources", ``, []string{`"uri":"demo://resource/static/document/architecture.md"`, `"uriTemplate":"demo://resource/dynamic/text/{resourceId}"`}},
		{"everything__read_resource", `{"uri":"demo://resource/static/document/architecture.md"}`, []string{"#"}},
		{"everything__read_resource", `{"uri":"demo://resource/dynamic/text/3"}`, []string{"3"}},
		{"everything__read_resource", `{"uri":"demo://resource/dynamic/blob/3"}`, []string{"[resource: demo://resource/dynamic/blob/3"}},
		{"everything__list_prompts", `{}`, []string{`"name":"args-prompt"`, `"name":"city"`}},
		{"everything__get_prompt", `{"name":"args-prompt","arguments":{"city":"Paris"}}`, []string{"user: ", "Paris"}},
		{"everything__get_prompt", `{"name":"resource-prompt","arguments":{"resourceType":"Text","resourceId":"2"}}`, []string{"user:"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			out, err := tool(tt.tool).Handler(ctx, json.RawMessage(tt.args))
			if err != nil {
				t.Fatalf("%s: %v", tt.tool, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%.2000s", w, out)
				}
			}
		})
	}
	if _, err := tool("everything__read_resource").Handler(ctx, json.RawMessage(`{"url":"x"}`)); err == nil {
		t.Error("read_resource accepted arguments its schema refuses")
	}
	out, err := tool("echo").Handler(ctx, json.RawMessage(`{"message":"hi"}`))
	if err == nil || out != "tool call denied: echo is not for this agent" {
		t.Errorf("denied echo: %q, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(audit, ",")
	for _, w := range []string{"resources/list ,", "resources/read ,", "prompts/get ,", "resources/read invalid_arguments", "tools/call denied"} {
		if !strings.Contains(got+",", w) {
			t.Errorf("AfterCall saw %q, lacking %q", got, w)
		}
	}
}
