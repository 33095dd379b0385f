package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

func TestForModel(t *testing.T) {
	transport := &bridge.ServerError{Server: "s", Phase: bridge.PhaseCall, Err: errors.New("connection reset")}
	for _, tc := range []struct {
		name     string
		text     string
		err      error
		wantText string
		wantErr  error
	}{
		{"ok", "42", nil, "42", nil},
		{"tool error", "no station", &results.ToolError{Text: "no station"}, "no station", nil},
		{"tool error, text only in error", "", &results.ToolError{Text: "no station"}, "no station", nil},
		{"invalid arguments", "", fmt.Errorf("tool %q: %w: city is required", "f", bridge.ErrInvalidArguments), `error: tool "f": invalid arguments: city is required`, nil},
		{"denied", "", &bridge.DeniedError{Tool: "f", Reason: "off limits"}, "tool call denied: off limits", nil},
		{"unknown tool", "", fmt.Errorf("tool %q: %w", "g", bridge.ErrUnknownTool), `error: tool "g": unknown tool`, nil},
		{"tool gone", "", fmt.Errorf("tool %q: %w", "g", bridge.ErrToolGone), `error: tool "g": the server no longer offers this tool`, nil},
		{"transport", "", transport, "", transport},
		{"closed", "", fmt.Errorf("x: %w", bridge.ErrServerClosed), "", bridge.ErrServerClosed},
		{"cancelled", "", context.Canceled, "", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := bridge.ForModel(tc.text, tc.err)
			if text != tc.wantText || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("ForModel = %q, %v; want %q, %v", text, err, tc.wantText, tc.wantErr)
			}
		})
	}
}
