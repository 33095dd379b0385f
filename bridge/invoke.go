package bridge

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Invocation is one call made the way a model makes it, with what went in and what came
// back, for hosts that show more than the model reads (mcpbridge serve, debuggers, audits).
type Invocation struct {
	// Args are the arguments sent to the server ({} for empty input), after the checks of
	// Handler; nil when the call was refused before that.
	Args json.RawMessage
	// Result is the server's raw result; nil when the call failed before or in transport.
	Result *mcp.CallToolResult
	// Text is what Handler returns: what the model reads.
	Text string
}

// Invoke calls the tool exactly as Handler does (argument validation, timeouts, redial,
// flattening, Options.OnAppResult) and also returns the arguments sent and the raw result.
// The error is Handler's error. A Tool not made by this package (no Server) and a tool that
// exposes resources or prompts (ServerConfig.Expose) run their Handler and have no Result.
func (t Tool) Invoke(ctx context.Context, args json.RawMessage) (Invocation, error) {
	if t.Server == nil || t.RemoteName == "" || t.exposed {
		if t.Handler == nil {
			return Invocation{}, errors.New("tool has no handler")
		}
		text, err := t.Handler(ctx, args)
		return Invocation{Text: text}, err
	}
	return invoke(ctx, t.Server, t.RemoteName, args)
}
