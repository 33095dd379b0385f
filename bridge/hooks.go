package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/callwatch"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/session"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/results"
)

// Origin says where a tool call came from.
type Origin uint8

// The origins of a tool call.
const (
	// OriginHandler is a call through a Tool's Handler: the model's call.
	OriginHandler Origin = iota + 1
	// OriginCallTool is a call through Server.CallTool: host code, by the server's own name.
	OriginCallTool
	// OriginApp is an MCP App's tools/call through Set.Proxy (or Set.ProxyHandler).
	OriginApp
)

// String returns "handler", "call_tool" or "app".
func (o Origin) String() string {
	switch o {
	case OriginHandler:
		return "handler"
	case OriginCallTool:
		return "call_tool"
	case OriginApp:
		return "app"
	}
	return "origin(" + strconv.Itoa(int(o)) + ")"
}

// Call describes one tool call to Options.BeforeCall and Options.AfterCall. Hooks must not
// modify it or keep Args beyond the hook's return.
type Call struct {
	// Origin says who made the call: the model (a Handler), host code (Server.CallTool) or
	// an MCP App (Set.Proxy).
	Origin Origin
	// Method is the MCP method the call makes: "tools/call", or for the tools that expose a
	// server's resources and prompts (ServerConfig.Expose) "resources/list",
	// "resources/read", "prompts/list" or "prompts/get".
	Method string
	// Tool is the model-visible name (Tool.Name); "" for a tool the model is not offered
	// (app-only, filtered out by config, or not listed).
	Tool string
	// RemoteName is the tool's name on the server.
	RemoteName string
	// Server is the server the call goes to.
	Server *Server
	// Title and Annotations are the server's display title and behaviour hints
	// (destructiveHint, readOnlyHint, ...) as listed; Annotations may be nil.
	Title       string
	Annotations *mcp.ToolAnnotations
	// Args are the arguments that will be sent: normalised ({} for none) and, for Handler
	// calls, validated against the tool's inputSchema. Server.CallTool and App calls are
	// not validated (CallTool is raw by contract).
	Args json.RawMessage
}

// CallEnd is what Options.AfterCall learns about a finished call.
type CallEnd struct {
	// Duration is the whole call as the caller saw it: validation, BeforeCall (a human's
	// approval included) and the request.
	Duration time.Duration
	// ArgsBytes is the size of the arguments sent (or refused).
	ArgsBytes int
	// ResultBytes is the size of what the caller got: the text for a Handler, the JSON
	// result for an App; for Server.CallTool the bytes of the result's content blocks
	// (text, and binary data as decoded) plus its structuredContent's JSON. 0 on failure.
	ResultBytes int
	// Outcome says how the call ended: OutcomeOK ("") when it succeeded.
	Outcome Outcome
	// Err is the error the caller got: nil on success, a *results.ToolError for the
	// tool's own failure, a *DeniedError for a denial.
	Err error
}

// Outcome classifies how a tool call ended. It is also the error.type attribute of the
// call's span and metrics.
type Outcome string

// The outcomes of a call. A JSON-RPC error the server sent has its code as outcome
// ("-32602"), also when it came with an HTTP error status; a failure on the way (an HTTP
// status without a JSON-RPC error, a refused connection), which go-sdk wraps in a JSON-RPC
// error of its own ("rejected by transport", -32005), is OutcomeTransport.
const (
	OutcomeOK               Outcome = ""
	OutcomeToolError        Outcome = "tool_error"        // the tool ran and reported isError
	OutcomeDenied           Outcome = "denied"            // BeforeCall denied it; the server was not contacted
	OutcomeHookError        Outcome = "hook_error"        // BeforeCall failed; the server was not contacted
	OutcomeInvalidArguments Outcome = "invalid_arguments" // refused before contacting the server
	OutcomeUnknownTool      Outcome = "unknown_tool"
	OutcomeToolGone         Outcome = "tool_gone"
	OutcomeTimeout          Outcome = "timeout"
	OutcomeCanceled         Outcome = "canceled"
	OutcomeServerClosed     Outcome = "server_closed"
	OutcomeTransport        Outcome = "transport" // the session or connection failed
)

// DeniedError is the error of a call that Options.BeforeCall denied (return Deny(reason)).
// The server was not contacted. A Handler returns Error() also as its text, so the model
// reads the reason; errors.Is(err, ErrDenied) holds.
type DeniedError struct {
	Tool   string // the tool's name on the server
	Reason string
}

// Error returns what the model reads: "tool call denied: <reason>".
func (e *DeniedError) Error() string {
	if e.Reason == "" {
		return "tool call denied"
	}
	return "tool call denied: " + e.Reason
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// ErrDenied matches every *DeniedError with errors.Is.
var ErrDenied = errors.New("tool call denied")

// Deny returns the error a BeforeCall hook returns to refuse a call: the caller gets a
// *DeniedError whose text, with reason, is what the model reads.
func Deny(reason string) error { return &DeniedError{Reason: reason} }

// observed reports whether anything watches calls: hooks or telemetry. When nothing does,
// calls take the plain path, which allocates nothing for them.
func (o *options) observed() bool {
	return o.BeforeCall != nil || o.AfterCall != nil || o.tel.Active()
}

// callObs follows one observed call: its description, its start, its span.
type callObs struct {
	s       *Server
	call    Call
	start   time.Time
	span    *itel.CallSpan // nil without tracing or metrics
	timeout time.Duration  // the call timeout (toolCall.timeout): it also bounds AfterCall
}

// observe is the stage that starts following a call when hooks or telemetry watch calls:
// its description (what the caller asked, filled in by beforeCall) and its span. The
// call's deadline is already set (call.go), so BeforeCall's wait for a human counts against
// it.
func observe(c *toolCall) error {
	if !c.s.opts.observed() {
		return nil
	}
	args := c.args
	if args == nil {
		args = c.in // a model's call is observed before its arguments are checked
	}
	c.ob = &callObs{s: c.s, start: time.Now(), timeout: c.timeout, call: Call{Origin: c.origin, Method: c.method(), RemoteName: c.remote, Server: c.s, Args: args}}
	c.ctx, c.ob.span = c.s.opts.tel.StartCall(c.ctx, itel.Call{Method: c.ob.call.Method, Name: c.remote, Server: c.s.cfg.ID, Origin: c.origin.String()},
		func() itel.Net { return netOf(c.s) })
	if c.exposed != nil {
		c.ob.call.Tool, c.ob.call.Annotations = c.exposed.name, c.exposed.annotations
	}
	return nil
}

// describe fills in what the listing says about the tool and the arguments to send.
func (ob *callObs) describe(rt *catalog.Tool, args json.RawMessage) {
	if rt != nil && rt.Listed != nil {
		ob.call.Title = rt.Listed.Title
		ob.call.Annotations = rt.Listed.Annotations
	}
	if ob.call.Tool == "" && ob.call.Method == "tools/call" {
		ob.call.Tool = modelName(ob.s, ob.call.RemoteName)
	}
	ob.call.Args = args
}

// beforeCall is the stage that describes an observed call and runs BeforeCall; a model
// reads a denial's reason as the call's text.
func beforeCall(c *toolCall) error {
	if c.ob == nil {
		return nil
	}
	if c.exposed != nil {
		c.ob.call.RemoteName = c.input.Name // the prompt, for prompts/get
		c.ob.describe(nil, c.args)
		c.ob.span.Target(c.exposed.tool.Method, c.input.Name, c.input.URI)
	} else {
		c.ob.describe(c.rt, c.args)
	}
	err := c.ob.before(c.ctx, c.label())
	if d, ok := err.(*DeniedError); ok && c.origin == OriginHandler {
		c.text = d.Error() // what the model reads
	}
	return err
}

// before runs BeforeCall. It returns nil to go ahead, a *DeniedError for a denial, or the
// error the caller gets. The hook runs on its own goroutine (callwatch.Before) so that a hook
// waiting for a human that ignores ctx still cannot hold the call past its deadline or
// Close; a panic in it fails the call.
func (ob *callObs) before(ctx context.Context, label string) error {
	hook := ob.s.opts.BeforeCall
	if hook == nil {
		return nil
	}
	err, waited := callwatch.Before(ctx, hook, &ob.call, func(r any) {
		ob.s.log.Error("BeforeCall panicked", "tool", ob.call.RemoteName, "panic", r)
	})
	if waited {
		return ob.s.pool.RequestErr(ctx, string(PhaseCall), label+": waiting for BeforeCall", ob.timeout, err)
	}
	if err == nil {
		return nil
	}
	var d *DeniedError
	if errors.As(err, &d) {
		return &DeniedError{Tool: ob.call.RemoteName, Reason: d.Reason}
	}
	return &hookError{&ServerError{Server: ob.s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: BeforeCall: %w", label, err)}}
}

// hookError marks a call refused because BeforeCall failed (for its Outcome).
type hookError struct{ *ServerError }

func (e *hookError) Unwrap() error { return e.ServerError }

// end reports the outcome to the span, the metrics and AfterCall, after the caller ended
// the call's bound. isError says a raw result (Server.CallTool, an App's call) reports the
// tool's own failure.
func (ob *callObs) end(ctx context.Context, resultBytes int, isError bool, err error) {
	end := CallEnd{
		Duration:    time.Since(ob.start),
		ArgsBytes:   len(ob.call.Args),
		ResultBytes: resultBytes,
		Outcome:     outcomeOf(err),
		Err:         err,
	}
	if isError && err == nil {
		end.Outcome = OutcomeToolError
	}
	if err != nil && end.Outcome != OutcomeToolError {
		end.ResultBytes = 0
	}
	if he, ok := err.(*hookError); ok {
		end.Err = he.ServerError
	}
	ob.s.opts.tel.EndCall(ob.span, itel.Call{Method: ob.call.Method, Name: ob.call.RemoteName}, itel.End{
		ErrorType: string(end.Outcome), Err: end.Err, ArgsBytes: end.ArgsBytes, ResultBytes: end.ResultBytes, Duration: end.Duration})
	if h := ob.s.opts.AfterCall; h != nil {
		callwatch.After(ctx, ob.timeout, h, &ob.call, &end)
	}
}

// outcomeOf classifies err (see Outcome).
func outcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	var te *results.ToolError
	var he *hookError
	switch {
	case errors.As(err, &te):
		return OutcomeToolError
	case errors.Is(err, ErrDenied):
		return OutcomeDenied
	case errors.As(err, &he):
		return OutcomeHookError
	case errors.Is(err, ErrInvalidArguments):
		return OutcomeInvalidArguments
	case errors.Is(err, ErrUnknownTool):
		return OutcomeUnknownTool
	case errors.Is(err, ErrToolGone):
		return OutcomeToolGone
	case errors.Is(err, ErrServerClosed):
		return OutcomeServerClosed
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return OutcomeCanceled
	}
	if je := session.SentByServer(err); je != nil { // go-sdk's own JSON-RPC errors skipped
		return Outcome(strconv.FormatInt(je.Code, 10))
	}
	return OutcomeTransport
}

// modelName returns the model-visible name of the server's tool remote, or "".
func modelName(s *Server, remote string) string {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	for _, t := range s.tools {
		if t.RemoteName == remote && !t.exposed {
			return t.Name
		}
	}
	return ""
}
