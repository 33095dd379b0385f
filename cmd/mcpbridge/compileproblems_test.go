package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestCompileProblems: probe reports an inputSchema that does not compile although the
// bridge, which compiles it on the tool's first call, has not yet; a tool the bridge already
// reported, and one whose schema compiles, get nothing.
func TestCompileProblems(t *testing.T) {
	tools := bridge.Tools{
		{Name: "good", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
		{Name: "bad_type", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nosuchtype"}}}`)},
		{Name: "bad_ref", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)},
		{Name: "reported", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nosuchtype"}}}`)},
		{Name: "none"},
	}
	got := compileProblems(tools, []bridge.ToolProblem{{Tool: "reported", Problem: "inputSchema does not compile"}})
	var names []string
	for _, p := range got {
		names = append(names, p.Tool)
		if p.Source != "bridge" || !strings.HasPrefix(p.Problem, "inputSchema does not compile, arguments are not validated: ") {
			t.Errorf("%s: %+v", p.Tool, p)
		}
	}
	if strings.Join(names, ",") != "bad_type,bad_ref" {
		t.Errorf("problems for %v, want bad_type and bad_ref", names)
	}
}
