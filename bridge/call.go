package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/results"
)

// toolCall is one tool call on its way through call.
type toolCall struct {
	origin Origin
	// textOnly: the caller uses only the text (a Tool's Handler), never the result.
	textOnly bool
	remote   string          // the tool's name on the server; "" for an exposed tool
	args     json.RawMessage // as the caller gave them
	// A tool exposing the server's resources or prompts (ServerConfig.Expose): what it
	// does, its model-visible name, its argument schema and its annotations (the Tool's).
	// nil for the server's own tools.
	exposed            *exposedTool
	exposedName        string
	exposedSchema      *jsonschema.Schema
	exposedAnnotations *mcp.ToolAnnotations
}

// callResult is what a call produced; each entry point returns its part of it.
type callResult struct {
	args json.RawMessage     // the arguments sent; nil when the call was refused before that
	res  *mcp.CallToolResult // the server's result
	text string              // what the model reads (Handler, exposed tools), or a denial's reason
	json json.RawMessage     // the result as JSON (an App's call)
}

// call is the one path of every tool call: a Tool's Handler and Tool.Invoke (OriginHandler),
// the tools exposing resources and prompts (OriginHandler with c.exposed), Server.CallTool
// (OriginCallTool: raw, by the server's own name, no validation or flattening) and an MCP
// App's tools/call through Set.Proxy (OriginApp: the raw result as JSON). Each step is a
// call into the code that owns it:
//
//  1. resolve the tool by its server name (catalogue.go; an App's in proxy.go)
//  2. check and validate the arguments (validate.go, internal/schemaguard)
//  3. observe: the call timeout and Close bound what follows, the span starts (hooks.go, otel.go)
//  4. BeforeCall (hooks.go)
//  5. send: tools/call on the live session, directly or through go-sdk, with redial,
//     _meta and progress (session.go), or an exposed tool's request (expose.go)
//  6. check structuredContent against the outputSchema (internal/schemaguard)
//  7. flatten the result into the model's text (package results), or encode it for an App
//  8. OnAppResult (an MCP App tool called by the model)
//  9. AfterCall with the outcome, and the span's end (hooks.go, otel.go)
//
// A raw or App call is resolved and checked before it is observed: a refused App request is
// the App's bad request, not a call BeforeCall and AfterCall see. A model's call is observed
// from the start, so AfterCall sees an unknown tool or invalid arguments too. Steps 3, 4
// and 9 run only when hooks or telemetry watch calls (Options.observed).
func (s *Server) call(ctx context.Context, c *toolCall) (r callResult, err error) {
	// 1, 2 (raw and App calls). Resolve and check.
	var rt *remoteTool
	switch c.origin {
	case OriginCallTool:
		rt = s.rawTool(c.remote) // a tool not listed (filtered, or new) is still sent
		if len(c.args) == 0 {
			c.args = json.RawMessage(`{}`)
		}
	case OriginApp:
		if rt, c.args, err = s.appTool(ctx, c.remote, c.args); err != nil {
			return r, err
		}
	}

	// 3. Observe; 9. AfterCall when the call returns. The observed ctx is bounded by the
	// call timeout and by Close, and so is a model's call from its argument stage on: send
	// need not bound it again (one deadline per call).
	var ob *callObs
	bounded := false
	if s.opts.observed() {
		var octx context.Context
		octx, ob = s.observe(ctx, c.origin, c.method(), c.remote, c.args)
		ctx = octx
		// A call that may run as an MCP task is bounded by the task timeout: send bounds
		// each of its requests by the call timeout.
		bounded = ob.budget == s.opts.callTimeout(s.cfg)
		if c.exposed != nil {
			ob.call.Tool, ob.call.Annotations = c.exposedName, c.exposedAnnotations
		}
		defer func() {
			size, isError := r.outcome(c.origin)
			ob.end(octx, size, isError, err)
		}()
	}
	// The server's text in an error (a tool's error, a JSON-RPC error) may quote a secret
	// it was sent: masked before the caller and AfterCall see it (secrets.go).
	defer func() { err = s.secrets.maskCall(ctx, err, &r.text) }()

	// A closed server refuses every call as closed, before any work of ours.
	if s.life.Err() != nil {
		return r, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", c.label(), errServerClosed)}
	}

	// 1, 2 (a model's calls). Resolve and check.
	var label string
	var in exposedInput
	switch {
	case c.exposed != nil:
		label = fmt.Sprintf("tool %q", c.exposed.stem)
		var a json.RawMessage
		if a, in, err = exposedArgs(c); err != nil {
			return r, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", label, err)}
		}
		r.args = a
	case c.origin == OriginHandler:
		if rt, err = s.listedTool(ctx, c.remote); err != nil { // users_catalogue.go
			return r, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
		}
		label = rt.label
		// Our own work (validation) counts against the call's deadline like the server's,
		// and Close ends the call from here on, as it would in send (wire.Bound: the
		// direct path waits on the bounds without merging them into a context).
		budget := s.callBudget(c.remote) // the call timeout, or the task timeout (tasks.go)
		if !bounded && ob == nil {
			var release func()
			ctx, release = wire.Bound(ctx, s.life, budget)
			defer release()
			bounded = budget == s.opts.callTimeout(s.cfg)
		}
		a, err := s.modelArgs(ctx, rt, c.args)
		if err != nil {
			if s.life.Err() != nil {
				// Closed meanwhile: our own work (a schema compiled on first use) saw the
				// cancelled context; the call's outcome is that the server is closed.
				err = errServerClosed
			}
			return r, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", label, err)}
		}
		r.args = a
	default:
		label = rt.label
		r.args = c.args
	}

	// 4. BeforeCall.
	if ob != nil {
		if c.exposed != nil {
			ob.call.RemoteName = in.Name // the prompt, for prompts/get
			ob.describe(nil, r.args)
			ob.span.target(c.exposed.method, in.Name, in.URI)
		} else {
			ob.describe(rt, r.args)
		}
		if err = ob.before(ctx, label); err != nil {
			if d, ok := err.(*DeniedError); ok && c.origin == OriginHandler {
				r.text = d.Error() // what the model reads
			}
			return r, err
		}
	}

	// 5. Send.
	if c.exposed != nil {
		r.res, err = s.sendExposed(ctx, c.exposed, in)
	} else {
		// A Handler uses only the text, read once from the result: the result's _meta may
		// be the connection's shared copy, unless a hook or OnAppResult sees the result.
		shared := c.textOnly && ob == nil && (rt.ui.ResourceURI == "" || s.opts.OnAppResult == nil)
		r.res, err = s.send(ctx, rt, r.args, bounded, shared)
	}
	if err != nil {
		return r, err
	}

	switch {
	case c.exposed != nil:
		// 7. Flatten.
		r.text, err = results.Flatten(r.res, &results.Options{MaxBytes: s.opts.MaxResultBytes})
	case c.origin == OriginHandler:
		// 6. Check the output.
		if rt.outValidator != nil && r.res.StructuredContent != nil && !r.res.IsError {
			if err := rt.outValidator.CheckOutput(ctx, r.res.StructuredContent, s.log, rt.name); err != nil {
				s.schemaBroken(rt.name, "outputSchema", err)
			}
		}
		// 7. Flatten.
		app := rt.ui.ResourceURI != ""
		r.text, err = results.Flatten(r.res, &results.Options{MaxBytes: s.opts.MaxResultBytes, App: app})
		// 8. OnAppResult.
		if app && s.opts.OnAppResult != nil {
			s.opts.OnAppResult(ctx, apps.Activity{
				Result:      r.res,
				ResourceURI: rt.ui.ResourceURI,
				ServerHash:  s.Hash(),
				ServerID:    s.cfg.ID,
				ToolInput:   r.args,
			})
		}
	case c.origin == OriginApp:
		// 7. Encode.
		if r.json = marshalNoEscape(r.res); r.json == nil {
			err = fmt.Errorf("server %q: %s: the result could not be encoded", s.ID(), apps.MethodToolsCall)
		}
	}
	return r, err
}

// label names the call's tool in errors: `tool "<name>"`.
func (c *toolCall) label() string {
	if c.exposed != nil {
		return fmt.Sprintf("tool %q", c.exposed.stem)
	}
	return fmt.Sprintf("tool %q", c.remote)
}

// method is the MCP method the call makes.
func (c *toolCall) method() string {
	if c.exposed != nil {
		return c.exposed.method
	}
	return "tools/call"
}

// outcome is what AfterCall learns of r: the size of what the caller got (CallEnd.ResultBytes)
// and whether a raw result reports the tool's own failure.
func (r *callResult) outcome(o Origin) (size int, isError bool) {
	switch o {
	case OriginCallTool:
		return resultSize(r.res), r.res != nil && r.res.IsError
	case OriginApp:
		return len(r.json), r.res != nil && r.res.IsError
	}
	return len(r.text), false
}

// handle is a Tool's Handler: a model's call of the server's tool remote, of which the
// caller gets only the text.
func (s *Server) handle(ctx context.Context, remote string, args json.RawMessage) (string, error) {
	r, err := s.call(ctx, &toolCall{origin: OriginHandler, textOnly: true, remote: remote, args: args})
	return r.text, err
}

// invoke is a model's call of the server's tool remote: Tool.Invoke.
func (s *Server) invoke(ctx context.Context, remote string, args json.RawMessage) (Invocation, error) {
	r, err := s.call(ctx, &toolCall{origin: OriginHandler, remote: remote, args: args})
	return Invocation{Args: r.args, Result: r.res, Text: r.text}, err
}

// CallTool calls the server's tool `name` (its own name, not the model-visible one) with args
// as given (nil means {}), and returns the raw result: no validation, no flattening. A result
// with IsError is not a Go error. Timeouts and redials work as for a Handler.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	r, err := s.call(ctx, &toolCall{origin: OriginCallTool, remote: name, args: args})
	return r.res, err
}
