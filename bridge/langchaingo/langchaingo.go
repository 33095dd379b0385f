package langchaingo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
	"github.com/ttalk/mcpbridge/bridge"
)

// Tool is one bridge.Tool as a langchaingo tools.Tool. It is safe for concurrent use.
type Tool struct {
	t    bridge.Tool
	desc string
}

var _ tools.Tool = (*Tool)(nil)

// NewTool converts t.
func NewTool(t bridge.Tool) *Tool {
	desc := t.Description
	if len(t.Parameters) > 0 {
		var schema bytes.Buffer
		if json.Compact(&schema, t.Parameters) != nil {
			schema.Reset()
			schema.Write(t.Parameters)
		}
		if desc != "" {
			desc += "\n"
		}
		desc += "Input: a JSON object matching this JSON Schema: " + schema.String()
	}
	return &Tool{t: t, desc: desc}
}

// Tools converts every tool of ts, in order, for an agent.
func Tools(ts bridge.Tools) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = NewTool(t)
	}
	return out
}

// Name returns the name the model calls.
func (t *Tool) Name() string { return t.t.Name }

// Description returns the server's description followed by the tool's inputSchema.
func (t *Tool) Description() string { return t.desc }

// Bridge returns the bridge.Tool this tool calls.
func (t *Tool) Bridge() bridge.Tool { return t.t }

// Call runs the tool with input, the JSON object of the arguments as the agent read it
// from the model, and returns the text the model reads. Failures the model can act on are
// that text with a nil error (see bridge.ForModel); transport failures are errors.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	if t.t.Handler == nil {
		return "", fmt.Errorf("langchaingo: tool %q has no handler", t.t.Name)
	}
	return bridge.ForModel(t.t.Handler(ctx, json.RawMessage(strings.TrimSpace(input))))
}

// Functions returns ts as the llms.Tool values of llms.WithTools: type "function", the
// inputSchema as the FunctionDefinition's Parameters (a json.RawMessage, as the server
// sent it).
func Functions(ts bridge.Tools) []llms.Tool {
	out := make([]llms.Tool, len(ts))
	for i, t := range ts {
		var params any
		if len(t.Parameters) > 0 {
			params = t.Parameters
		}
		out[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name:        t.Name,
			Description: t.Description,
			Parameters:  params,
		}}
	}
	return out
}

// Run calls the tool of ts that call names and returns the response to send back, in a
// message of role llms.ChatMessageTypeTool. A name ts does not have, and every failure the
// model can act on, is the response's Content (see bridge.ForModel); the error is for
// transport failures, a closed server and ctx ending.
func Run(ctx context.Context, ts bridge.Tools, call llms.ToolCall) (llms.ToolCallResponse, error) {
	resp := llms.ToolCallResponse{ToolCallID: call.ID}
	if call.FunctionCall == nil {
		resp.Content = "error: the tool call names no function"
		return resp, nil
	}
	resp.Name = call.FunctionCall.Name
	for _, t := range ts {
		if t.Name != call.FunctionCall.Name {
			continue
		}
		if t.Handler == nil {
			return resp, fmt.Errorf("langchaingo: tool %q has no handler", t.Name)
		}
		text, err := bridge.ForModel(t.Handler(ctx, json.RawMessage(call.FunctionCall.Arguments)))
		resp.Content = text
		return resp, err
	}
	resp.Content, _ = bridge.ForModel("", fmt.Errorf("tool %q: %w", call.FunctionCall.Name, bridge.ErrUnknownTool))
	return resp, nil
}
