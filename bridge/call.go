package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/callwatch"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/expose"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/results"
)

// The call pipeline. Every tool call is one toolCall value that run takes through a fixed
// list of stages for its origin, then through one exit (finish). This file says what
// happens on a call; each stage is a function over the call value, here or beside what it
// works on (named in the list). A new stage (a rate limit, a cache) is one function and one
// line in the lists below.
//
// The origins: a Tool's Handler and Tool.Invoke (OriginHandler), the tools exposing a
// server's resources and prompts (OriginHandler with exposed set), Server.CallTool
// (OriginCallTool: raw, by the server's own name, no validation or flattening) and an MCP
// App's tools/call through Set.Proxy (OriginApp: the raw result as JSON); Server.StartTask
// is a raw call that returns once the server made a task of it.
//
// Before the first stage the call gets its one deadline, set here and nowhere below: the
// call timeout, or the task timeout when the call may run as an MCP task (taskBounded). It
// and Close bound every stage, our own work (validation, BeforeCall's wait for a human)
// like the server's.
//
// A model's call is observed from the start, so AfterCall sees an unknown tool or invalid
// arguments too. A raw or App call is resolved and checked before it is observed: a
// refused App request is the App's bad request, not a call BeforeCall and AfterCall see.
// observe, beforeCall and AfterCall do something only when hooks or telemetry watch calls
// (Options.observed).

// run takes c through its stages and the exit; see the top of this file.
func (c *toolCall) run(ctx context.Context) error {
	c.bound(ctx)
	var err error
	switch {
	case c.exposed != nil && c.exposed.skill: // skills.go: load_skill, read_skill_file
		err = c.through(
			observe,
			refuseClosed,
			exposedArguments,
			beforeCall,
			approveSkill, // Options.ApproveSkill
			sendSkill,    // package skills: read, verified against the manifest, wrapped
			flatten,
		)
	case c.exposed != nil:
		err = c.through(
			observe,          // hooks.go: the span starts, the call is described
			refuseClosed,     // a closed server refuses every call, before any work of ours
			exposedArguments, // validate.go: checked against the tool's own schema, decoded
			beforeCall,       // hooks.go: BeforeCall
			sendExposed,      // expose.go: the resources/* or prompts/* request
			flatten,          // package results: the model's text
		)
	case c.origin == OriginHandler:
		err = c.through(
			observe,
			refuseClosed,
			resolveTool,    // the listed tool (users_catalogue.go: the user's own catalogue)
			modelArguments, // validate.go: {} for none, nulls dropped, inputSchema
			beforeCall,
			sendTool,    // session.go (internal/session): tools/call with redial, _meta, progress, tasks
			checkOutput, // structuredContent against the outputSchema
			flatten,
			appResult, // Options.OnAppResult, for a tool with an MCP App
		)
	case c.startTask: // Server.StartTask
		err = c.through(
			resolveRaw,
			rawArguments,
			observe,
			beforeCall,
			createTask, // tasks.go (internal/tasks): tools/call as a task, returning once made
		)
	case c.origin == OriginCallTool:
		err = c.through(
			resolveRaw,   // the listed tool, or one that only names it
			rawArguments, // as given, {} for none
			observe,
			refuseClosed,
			beforeCall,
			sendTool,
		)
	case c.origin == OriginApp:
		err = c.through(
			resolveApp,   // proxy.go: listed and visible to apps
			appArguments, // validate.go: checked like a model's
			observe,
			refuseClosed,
			beforeCall,
			sendTool,
			encodeResult, // the raw result as JSON
		)
	}
	if err != nil {
		err = c.wrap(err)
	} else {
		err = c.resultErr
	}
	return c.finish(err)
}

// stage is one step of a call. It reads and fills in c; an error ends the call (see wrap
// for what a stage returns).
type stage func(c *toolCall) error

// through runs stages in order until one fails.
func (c *toolCall) through(stages ...stage) error {
	for _, st := range stages {
		if err := st(c); err != nil {
			return err
		}
	}
	return nil
}

// toolCall is one tool call on its way through the pipeline: what the caller asked, the
// bounds, what each stage found and what it produced.
type toolCall struct {
	s      *Server
	origin Origin
	// textOnly: the caller uses only the text (a Tool's Handler), never the result.
	textOnly bool
	remote   string          // the tool's name on the server; "" for an exposed tool
	in       json.RawMessage // the arguments as the caller gave them
	exposed  *exposure       // a tool exposing resources or prompts; nil for the server's own
	// startTask: Server.StartTask, a raw call as a task that returns once the server made it.
	startTask bool

	// ctx is the call's context: the caller's, bounded by the deadline and Close (bound),
	// then carrying the span (observe).
	ctx     context.Context
	release func() // ends the bound
	// timeout is the call timeout: it bounds each request of a task-bounded call and is what
	// "no answer within" quotes. budget is the call's whole time: timeout, or when
	// taskBounded (the call may run as an MCP task) the longer of it and taskTimeout, which
	// bounds following a task the server made of the call.
	timeout, budget, taskTimeout time.Duration
	taskBounded                  bool

	rt    *catalog.Tool   // resolve*: the tool; nil for an exposed tool
	args  json.RawMessage // *Arguments: what is sent; nil while (or when) refused before that
	input expose.Input    // exposedArguments: an exposed tool's arguments, decoded
	ob    *callObs        // observe: nil when nothing watches calls
	res   *mcp.CallToolResult
	// structured: sendTool, for flatten: the result's structuredContent as sent.
	structured rawStructured
	text       string          // flatten: what the model reads; beforeCall: a denial's reason
	json       json.RawMessage // encodeResult: the result as JSON (an App's call)
	task       *Task           // createTask: the task the server made (StartTask only)
	// resultErr is the tool's own failure the result reports (flatten: a
	// *results.ToolError): the call's outcome, not a stage's failure, so the stages after
	// flatten still run.
	resultErr error
}

// bound sets the call's one deadline and Close on ctx (see the top of this file).
func (c *toolCall) bound(ctx context.Context) {
	c.timeout = c.s.opts.callTimeout(c.s.cfg)
	c.budget = c.timeout
	if c.exposed == nil {
		c.budget, c.taskBounded = taskHost{c.s}.callBudget(c.remote) // tasks.go
	}
	c.taskTimeout = c.s.tasks.Timeout()
	c.ctx, c.release = wire.Bound(ctx, c.s.life, c.budget)
}

// finish is the one exit of every call, success or failure: the server's text in an error
// (a tool's error, a JSON-RPC error) may quote a secret it was sent, so it is masked before
// the caller and AfterCall see it (secrets.go), with the text the caller gets beside it;
// the bound ends; the outcome is classified and reported to the span, the metrics and
// AfterCall (hooks.go).
func (c *toolCall) finish(err error) error {
	err = c.s.secrets.maskCall(c.ctx, err, &c.text)
	c.release()
	if c.ob != nil {
		size, isError := c.outcome()
		c.ob.end(c.ctx, size, isError, err)
	}
	return err
}

// wrap gives a stage's error the call's context: a *ServerError naming the server, the
// phase and the tool. What already is the caller's answer passes as it is: a *ServerError
// (made below send, or by BeforeCall's wait), a denial, a failing BeforeCall, and what a
// stage marks final (send's errors, an App's refusal). named is an error that names the
// tool already (the catalogue's).
func (c *toolCall) wrap(err error) error {
	switch e := err.(type) {
	case final:
		return e.error
	case named:
		return &ServerError{Server: c.s.cfg.ID, Phase: PhaseCall, Err: e.error}
	case *ServerError, *DeniedError, *hookError:
		return err
	}
	return &ServerError{Server: c.s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", c.label(), err)}
}

// final marks a stage's error that is the caller's answer as it is (see wrap).
type final struct{ error }

// finalErr is err marked final, or nil.
func finalErr(err error) error {
	if err == nil {
		return nil
	}
	return final{err}
}

// named marks a stage's error that names the tool already (see wrap).
type named struct{ error }

// label names the call's tool in errors: `tool "<name>"`.
func (c *toolCall) label() string {
	switch {
	case c.exposed != nil:
		return fmt.Sprintf("tool %q", c.exposed.tool.Stem)
	case c.rt != nil:
		return c.rt.Label
	}
	return fmt.Sprintf("tool %q", c.remote)
}

// method is the MCP method the call makes.
func (c *toolCall) method() string {
	if c.exposed != nil {
		return c.exposed.tool.Method
	}
	return "tools/call"
}

// outcome is what AfterCall learns of the call: the size of what the caller got
// (CallEnd.ResultBytes) and whether a raw result reports the tool's own failure.
func (c *toolCall) outcome() (size int, isError bool) {
	switch c.origin {
	case OriginCallTool:
		return callwatch.ResultSize(c.res), c.res != nil && c.res.IsError
	case OriginApp:
		return len(c.json), c.res != nil && c.res.IsError
	}
	return len(c.text), false
}

// The stages of this file; the others are beside what they work on.

// refuseClosed refuses every call of a closed server as closed, before any work of ours.
func refuseClosed(c *toolCall) error {
	if c.s.life.Err() != nil {
		return ErrServerClosed
	}
	return nil
}

// resolveTool finds a model's tool by its server name among the listed ones.
func resolveTool(c *toolCall) error {
	rt, err := c.s.listedTool(c.ctx, c.remote) // users_catalogue.go
	if err != nil {
		return named{err}
	}
	c.rt = rt
	return nil
}

// resolveRaw is a raw call's tool: the listed one, or for a tool not listed (filtered, or
// new) one that only names it, so that it is still sent.
func resolveRaw(c *toolCall) error {
	c.rt = c.s.rawTool(c.remote)
	return nil
}

// rawArguments sends a raw call's arguments as given, {} for none.
func rawArguments(c *toolCall) error {
	c.args = c.in
	if len(c.args) == 0 {
		c.args = json.RawMessage(`{}`)
	}
	return nil
}

// sendTool is the tools/call on the live session (session.go: redial and retry rules,
// _meta and the trace context, progress, a task the server makes of it), within the call's
// deadline.
func sendTool(c *toolCall) error {
	// A Handler uses only the text, read once from the result: the result's _meta may be
	// the connection's shared copy, unless a hook or OnAppResult sees the result.
	shared := c.textOnly && c.ob == nil && (c.rt.UI.ResourceURI == "" || c.s.opts.OnAppResult == nil)
	var err error
	c.res, err = c.s.send(c.ctx, c.rt, c.args, sendOptions{
		timeout:     c.timeout,
		taskBounded: c.taskBounded,
		taskTimeout: c.taskTimeout,
		shared:      shared,
		structured:  c.wantStructured(),
	})
	return finalErr(err)
}

// sendOptions is how the send stage asks session.go's send for one tools/call. ctx always
// carries the call's deadline and Close: send bounds it no further, except that each
// request of a taskBounded call is bounded by timeout.
type sendOptions struct {
	// timeout is the call timeout: the bound of each request of a taskBounded call and the
	// figure "no answer within" quotes.
	timeout time.Duration
	// taskBounded: the call may run as an MCP task, and ctx's deadline is the task's.
	taskBounded bool
	// taskTimeout bounds following a task the server created instead of answering.
	taskTimeout time.Duration
	// shared: only the result's text is used (wire.CallOptions.SharedMeta).
	shared bool
	// structured, when set, receives the result's structuredContent as the server sent it
	// (a call the model reads: results.Options.Structured keeps the server's key order).
	structured *rawStructured
}

// rawStructured is a call's structuredContent as the server sent it (raw), and the tap
// that follows the call for it when no task tap does (part of the call value, so that
// following costs no allocation).
type rawStructured struct {
	raw []byte
	tap wire.Tap
}

// checkOutput checks a model's result's structuredContent against the tool's
// outputSchema; a schema found not to compile is reported (validate.go), the result is
// passed on either way.
func checkOutput(c *toolCall) error {
	rt := c.rt
	if rt.OutValidator != nil && c.res.StructuredContent != nil && !c.res.IsError {
		if err := rt.OutValidator.CheckOutput(c.ctx, c.res.StructuredContent, c.s.log, rt.Name); err != nil {
			schemaBroken(c.s, rt.Name, "outputSchema", err)
		}
	}
	return nil
}

// flatten turns the result into the model's text (package results); a result reporting
// the tool's failure is the call's outcome (resultErr).
func flatten(c *toolCall) error {
	app := c.rt != nil && c.rt.UI.ResourceURI != ""
	c.text, c.resultErr = results.Flatten(c.res, &results.Options{MaxBytes: c.s.opts.MaxResultBytes, App: app, Structured: c.structured.raw})
	return nil
}

// wantStructured is where send keeps the raw structuredContent of a call whose result
// the model reads it of (flatten, an ordinary tool); nil for the others.
func (c *toolCall) wantStructured() *rawStructured {
	if c.origin != OriginHandler || c.rt == nil || c.rt.UI.ResourceURI != "" {
		return nil
	}
	return &c.structured
}

// appResult passes the result of a tool with an MCP App to Options.OnAppResult.
func appResult(c *toolCall) error {
	if c.rt.UI.ResourceURI == "" || c.s.opts.OnAppResult == nil {
		return nil
	}
	c.s.opts.OnAppResult(c.ctx, apps.Activity{
		Result:      c.res,
		ResourceURI: c.rt.UI.ResourceURI,
		ServerHash:  c.s.Hash(),
		ServerID:    c.s.cfg.ID,
		ToolInput:   c.args,
	})
	return nil
}

// createTask is StartTask's send stage: the tools/call as a task (tasks.go), the task
// it made, or the result when the server answered at once.
func createTask(c *toolCall) error {
	t, err := startTask(c.ctx, c.s, c.rt, c.args)
	c.task, c.res = &t, t.Result
	return finalErr(err)
}

// encodeResult encodes an App's result as JSON.
func encodeResult(c *toolCall) error {
	if c.json = jsonstr.Marshal(c.res); c.json == nil {
		return final{fmt.Errorf("server %q: %s: the result could not be encoded", c.s.ID(), apps.MethodToolsCall)}
	}
	return nil
}

// The entry points.

// handle is a Tool's Handler: a model's call of the server's tool remote, of which the
// caller gets only the text.
func handle(ctx context.Context, s *Server, remote string, args json.RawMessage) (string, error) {
	c := &toolCall{s: s, origin: OriginHandler, textOnly: true, remote: remote, in: args}
	err := c.run(ctx)
	return c.text, err
}

// invoke is a model's call of the server's tool remote: Tool.Invoke.
func invoke(ctx context.Context, s *Server, remote string, args json.RawMessage) (Invocation, error) {
	c := &toolCall{s: s, origin: OriginHandler, remote: remote, in: args}
	err := c.run(ctx)
	return Invocation{Args: c.args, Result: c.res, Text: c.text}, err
}

// CallTool calls the server's tool `name` (its own name, not the model-visible one) with args
// as given (nil means {}), and returns the raw result: no validation, no flattening. A result
// with IsError is not a Go error. Timeouts and redials work as for a Handler.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c := &toolCall{s: s, origin: OriginCallTool, remote: name, in: args}
	err := c.run(ctx)
	return c.res, err
}
