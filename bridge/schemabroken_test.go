package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/catalog"
)

// A schema listed too late to compile that turns out not to compile on first use is
// reported like one found broken at listing: one ToolProblem and one warning, however often
// the tool is called; the calls go ahead unvalidated.
func TestSchemaBrokenOnFirstUseIsReported(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(ServerConfig{ID: "s"}, resolve(&Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}), nil)
	defer s.Close()
	expired, cancel := context.WithCancel(context.Background())
	cancel() // the listing's deadline had passed
	s.schemas.Begin()
	v, problem := schemaOf(expired, s, json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`), "inputSchema")
	s.schemas.End()
	if v == nil || problem != "" {
		t.Fatalf("schema = %v, %q; want a validator compiled on first use", v, problem)
	}
	rt := catalog.NewTool(&mcp.Tool{Name: "t"})
	rt.Validator = v
	for range 3 {
		if err := validateArgs(context.Background(), s, rt, json.RawMessage(`{"a":"x"}`)); err != nil {
			t.Fatalf("validateArgs = %v, want the call to go ahead unvalidated", err)
		}
	}
	st := s.Status()
	if len(st.Problems) != 1 || st.Problems[0].Tool != "t" || !strings.HasPrefix(st.Problems[0].Problem, "inputSchema does not compile, arguments are not validated: ") {
		t.Errorf("problems = %+v, want one saying the inputSchema does not compile", st.Problems)
	}
	if n := strings.Count(logs.String(), "tool problem"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// validateArgs validates a call's arguments against the tool's inputSchema
// (catalog.Tool.Validate), reporting a schema found not to compile on first use.
func validateArgs(ctx context.Context, s *Server, rt *catalog.Tool, args json.RawMessage) error {
	broken, err := rt.Validate(ctx, args, s.log)
	schemaBroken(s, rt.Name, "inputSchema", broken)
	return err
}
