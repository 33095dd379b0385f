package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// Schema guarding (internal/schemaguard) as a Server uses it: the budgets from Options, the
// per-server cache of measured schemas, and the argument stages of a call (see call.go).
// All of them run within the call's deadline (call.go), so our own work counts against it
// like the server's.

// schemaOf returns the validator of raw (what: "inputSchema" or "outputSchema"), or nil and
// a problem saying why validation is off; see schemaguard.Cache.Schema.
func schemaOf(ctx context.Context, s *Server, raw json.RawMessage, what string) (*schemaguard.Schema, string) {
	return s.schemas.Schema(ctx, raw, what, schemaguard.Limits{MaxCost: s.opts.MaxSchemaCost, MaxNodes: s.opts.MaxSchemaNodes})
}

// modelArguments is the argument stage of a model's call (Handler, Invoke): empty input
// becomes {}, anything but an object is refused, a null the schema lets go is dropped, and
// the rest is validated against the tool's inputSchema.
func modelArguments(c *toolCall) error { return arguments(c, true) }

// appArguments is the argument stage of an App's tools/call through the proxy: an App is
// as untrusted as a model, so its arguments are checked and validated the same way (no
// null is dropped); a refusal is the App's bad request (apps.ErrBadRequest: HTTP 400).
func appArguments(c *toolCall) error { return arguments(c, false) }

// arguments checks and validates c's input (catalog.Tool.Arguments), dropping nulls for a
// model's call.
func arguments(c *toolCall, model bool) error {
	a, broken, err := c.rt.Arguments(c.ctx, c.in, model, c.s.log)
	switch {
	case err != nil && !model:
		return final{fmt.Errorf("%w: %v", apps.ErrBadRequest, err)}
	case err != nil && c.s.life.Err() != nil:
		// Closed meanwhile: our own work (a schema compiled on first use) saw the
		// cancelled context; the call's outcome is that the server is closed.
		return ErrServerClosed
	case err != nil:
		return err
	}
	schemaBroken(c.s, c.rt.Name, "inputSchema", broken)
	c.args = a
	return nil
}

// exposedArguments is the argument stage of a tool exposing resources or prompts: checked
// against its own (compiled) schema and decoded.
func exposedArguments(c *toolCall) error {
	a, err := schemaguard.NormalizeArgs(c.in)
	if err == nil {
		err = schemaguard.ValidateArgs(c.exposed.schema, a)
	}
	if err != nil {
		return err
	}
	if jerr := json.Unmarshal(a, &c.input); jerr != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, jerr)
	}
	c.args = a
	return nil
}

// schemaBroken reports, once, a schema of tool found not to compile on first use (the
// listing's deadline left no time to compile it then), as one found broken when listed is
// reported: a ToolProblem in Status and a warning. Validation is off for it. A nil err
// reports nothing.
func schemaBroken(s *Server, tool, what string, err error) {
	if err == nil {
		return
	}
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
