package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve runs a go-sdk server over Streamable HTTP with a tool that works ("ok") and one that
// reports an error ("broken"), and returns its URL.
func serve(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "ok", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// The client exits non-zero (mainErr fails) when a call a scenario expects to work fails,
// and for a scenario it does not know, instead of connecting and listing.
func TestClientFailsWhatTheScenarioExpectsToWork(t *testing.T) {
	url := serve(t)
	tests := []struct {
		scenario, context string
		wantErr           string // "" for success
	}{
		{"no-such-scenario", "", `unknown scenario "no-such-scenario"`},
		{"auth/some-future-grant", "", `unknown scenario "auth/some-future-grant"`},
		{"http-standard-headers", "", "broken: it broke"}, // the first tool fails
		{"http-custom-headers", `{"toolCalls":[{"name":"ok"},{"name":"broken","arguments":{}}]}`, "broken: it broke"},
		{"http-custom-headers", `{"toolCalls":[]}`, "no toolCalls"},
		{"http-custom-headers", `{"toolCalls":[{"name":"ok"}]}`, ""},
		{"http-invalid-tool-headers", "", "broken: it broke"},
		{"sep-2322-client-request-state", "", `tool "test_mrtr_echo_state" not offered`},
		{"initialize", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+" "+tt.context, func(t *testing.T) {
			env := map[string]string{"MCP_CONFORMANCE_SCENARIO": tt.scenario, "MCP_CONFORMANCE_CONTEXT": tt.context}
			err := mainErr([]string{url}, func(k string) string { return env[k] }, io.Discard)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
