package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// Schema guarding (internal/schemaguard) as a Server uses it: the budgets from Options, the
// per-server cache of measured schemas, and the argument stage of a call (see call.go).

// schema returns the validator of raw (what: "inputSchema" or "outputSchema"), or nil and a
// problem saying why validation is off; see schemaguard.Cache.Schema.
func (s *Server) schema(ctx context.Context, raw json.RawMessage, what string) (*schemaguard.Schema, string) {
	return s.schemas.Schema(ctx, raw, what, schemaguard.Limits{MaxCost: s.opts.MaxSchemaCost, MaxNodes: s.opts.MaxSchemaNodes})
}

// modelArgs is the argument stage of a model's call (Handler, Invoke): empty input becomes
// {}, anything but an object is refused, a null the schema lets go is dropped, and the rest
// is validated against the tool's inputSchema within ctx.
func (s *Server) modelArgs(ctx context.Context, rt *remoteTool, args json.RawMessage) (json.RawMessage, error) {
	a, err := schemaguard.NormalizeArgs(args)
	if err != nil {
		return nil, err
	}
	var dropped []string
	if a, dropped = rt.nulls.Drop(rt.schema, a); len(dropped) > 0 {
		s.log.Debug("null arguments for optional properties dropped", "tool", rt.name, "properties", dropped)
	}
	return a, s.validateArgs(ctx, rt, a)
}

// appArgs is the argument stage of an App's tools/call through the proxy: an App is as
// untrusted as a model, so its arguments are checked and validated the same way (no null is
// dropped), bounded by the call timeout like a Handler's.
func (s *Server) appArgs(ctx context.Context, rt *remoteTool, args json.RawMessage) (json.RawMessage, error) {
	a, err := schemaguard.NormalizeArgs(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.callTimeout(s.cfg))
	defer cancel()
	return a, s.validateArgs(ctx, rt, a)
}

// validateArgs validates a call's arguments against the tool's inputSchema, within the
// work budget and ctx. Arguments over the budget are passed on unvalidated (the server
// validates them), with a debug log.
func (s *Server) validateArgs(ctx context.Context, rt *remoteTool, args json.RawMessage) error {
	if rt.validator == nil {
		return nil
	}
	err := rt.validator.ValidateJSON(ctx, args)
	switch {
	case errors.Is(err, schemaguard.ErrValidationSkipped):
		s.log.Debug("arguments not validated", "tool", rt.name, "reason", err)
		return nil
	case errors.Is(err, schemaguard.ErrNotCompiled):
		s.schemaBroken(rt.name, "inputSchema", err)
		return nil
	}
	return err
}

// schemaBroken reports, once, a schema of tool found not to compile on first use (the
// listing's deadline left no time to compile it then), as one found broken when listed is
// reported: a ToolProblem in Status and a warning. Validation is off for it.
func (s *Server) schemaBroken(tool, what string, err error) {
	p := ToolProblem{Tool: tool, Problem: schemaguard.NotCompiledProblem(what, err)}
	s.catMu.Lock()
	known := slices.Contains(s.status.Problems, p)
	if !known {
		s.status.Problems = append(s.status.Problems, p)
	}
	s.catMu.Unlock()
	if !known {
		s.log.Warn("tool problem", "tool", tool, "problem", p.Problem)
	}
}

// exposedArgs is the argument stage of a tool exposing resources or prompts: checked
// against its own (compiled) schema and decoded.
func exposedArgs(c *toolCall) (json.RawMessage, exposedInput, error) {
	var in exposedInput
	a, err := schemaguard.NormalizeArgs(c.args)
	if err == nil {
		err = schemaguard.ValidateArgs(c.exposedSchema, a)
	}
	if err == nil {
		if jerr := json.Unmarshal(a, &in); jerr != nil {
			err = fmt.Errorf("%w: %v", ErrInvalidArguments, jerr)
		}
	}
	return a, in, err
}
