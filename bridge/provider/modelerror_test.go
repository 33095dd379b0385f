package provider

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

func TestModelError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&results.ToolError{Text: "no such file"}, true},
		{fmt.Errorf("tool %q: %w", "x", &results.ToolError{Text: "no"}), true},
		{fmt.Errorf("%w: at /a: want string", bridge.ErrInvalidArguments), true},
		{fmt.Errorf("%w %q", bridge.ErrUnknownTool, "x"), true},
		{fmt.Errorf("tool %q: %w", "x", bridge.ErrToolGone), true},
		{&bridge.DeniedError{Reason: "not now"}, true},
		{&bridge.ServerError{Server: "s", Phase: bridge.PhaseCall, Err: errors.New("connection reset")}, false},
		{fmt.Errorf("tool %q: %w", "x", bridge.ErrServerClosed), false},
		{context.DeadlineExceeded, false},
		{errors.New(`tool "x" has no handler`), false},
	}
	for _, tc := range tests {
		if got := ModelError(tc.err); got != tc.want {
			t.Errorf("ModelError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A search call's bad arguments are the model's to fix.
func TestSearchArgumentsAreInvalidArguments(t *testing.T) {
	ts, err := New(FormatOpenAI, []bridge.Tool{{Name: "a", Parameters: []byte(`{"type":"object","properties":{}}`)}}, &Options{Defer: &Deferral{}})
	if err != nil {
		t.Fatal(err)
	}
	r := ts.Run(context.Background(), Call{ID: "1", Name: searchToolName, Arguments: []byte(`{"query":""}`)})
	if !errors.Is(r.Err, bridge.ErrInvalidArguments) || !ModelError(r.Err) {
		t.Errorf("search with an empty query: %v, want invalid arguments", r.Err)
	}
}
