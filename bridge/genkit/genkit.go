package genkit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/ttalk/mcpbridge/bridge"
)

// Define registers every tool of tools on g, in order, and returns them as Genkit tools.
// It refuses, before registering any, a tool whose name g already has (Genkit panics on a
// second registration), two tools of one name, and an inputSchema that is not a JSON
// object.
func Define(g *genkit.Genkit, tools bridge.Tools) ([]ai.Tool, error) {
	acts := make([]*action, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t.Handler == nil {
			return nil, fmt.Errorf("genkit: tool %q has no handler", t.Name)
		}
		if seen[t.Name] || genkit.LookupTool(g, t.Name) != nil {
			return nil, fmt.Errorf("genkit: tool %q is already defined", t.Name)
		}
		seen[t.Name] = true
		a, err := newAction(t)
		if err != nil {
			return nil, err
		}
		acts = append(acts, a)
	}
	out := make([]ai.Tool, 0, len(acts))
	for _, a := range acts {
		genkit.RegisterAction(g, a)
		out = append(out, genkit.LookupTool(g, a.t.Name))
	}
	return out, nil
}

// Refs returns tools as the ai.ToolRef values ai.WithTools takes.
func Refs(tools []ai.Tool) []ai.ToolRef {
	refs := make([]ai.ToolRef, len(tools))
	for i, t := range tools {
		refs[i] = t
	}
	return refs
}

// action is one bridge.Tool as a Genkit tool action (type tool.v2, and tool for Genkit's
// older lookups), run without Genkit's input check.
type action struct {
	t    bridge.Tool
	desc api.ActionDesc
}

var _ api.Action = (*action)(nil)

func newAction(t bridge.Tool) (*action, error) {
	var schema map[string]any
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("genkit: tool %q: inputSchema: %w", t.Name, err)
		}
	}
	return &action{t: t, desc: api.ActionDesc{
		Type:        api.ActionTypeToolV2,
		Key:         api.NewKey(api.ActionTypeToolV2, "", t.Name),
		Name:        t.Name,
		Description: t.Description,
		InputSchema: schema,
		Metadata: map[string]any{
			"type":        api.ActionTypeToolV2,
			"name":        t.Name,
			"description": t.Description,
			"tool":        map[string]any{"multipart": false},
		},
	}}, nil
}

// Name returns the tool's name.
func (a *action) Name() string { return a.t.Name }

// Desc returns the tool's descriptor, with its inputSchema.
func (a *action) Desc() api.ActionDesc { return a.desc }

// Register records the action under both of Genkit's tool action types.
func (a *action) Register(r api.Registry) {
	r.RegisterAction(a.desc.Key, a)
	r.RegisterAction(api.NewKey(api.ActionTypeTool, "", a.t.Name), a)
}

// RunJSON calls the tool with the model's arguments and returns {"output": text}, the
// shape Genkit reads a tool's response in.
func (a *action) RunJSON(ctx context.Context, input json.RawMessage, _ func(context.Context, json.RawMessage) error) (json.RawMessage, error) {
	text, err := bridge.ForModel(a.t.Handler(ctx, input))
	if err != nil {
		return nil, err
	}
	return json.Marshal(ai.MultipartToolResponse{Output: text})
}

// RunJSONWithTelemetry is RunJSON; there is no Genkit span (see the package doc).
func (a *action) RunJSONWithTelemetry(ctx context.Context, input json.RawMessage, cb func(context.Context, json.RawMessage) error) (*api.ActionRunResult[json.RawMessage], error) {
	out, err := a.RunJSON(ctx, input, cb)
	if err != nil {
		return nil, err
	}
	return &api.ActionRunResult[json.RawMessage]{Result: out}, nil
}
