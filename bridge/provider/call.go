package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// maxCallBytes bounds one tool-call object from a model API.
const maxCallBytes = 16 << 20

// Call is one tool call a model made, whatever the format.
type Call struct {
	// ID pairs the result with the call: OpenAI's tool call id or call_id, Anthropic's
	// tool_use id, Gemini's functionCall id (Gemini may leave it empty; the name pairs them).
	ID   string
	Name string
	// Arguments is the JSON the model wrote for the tool's parameters.
	Arguments json.RawMessage
}

// Result is the outcome of one Call: the text the model reads, and the error, if any.
type Result struct {
	Call Call
	// Text is what the model reads: the tool's output, or on failure the error's text.
	Text string
	// Err is nil on success. A tool's own failure is a *results.ToolError; invalid
	// arguments wrap bridge.ErrInvalidArguments; an unknown tool wraps bridge.ErrUnknownTool.
	Err error
	// Loaded names the deferred tools a search call loaded (see Deferral), best first;
	// nil for every other call.
	Loaded []string
}

// ParseCall reads one tool call as the toolset's format delivers it (each Format constant
// says in what shape).
func (ts *Toolset) ParseCall(raw json.RawMessage) (Call, error) {
	if len(raw) > maxCallBytes {
		return Call{}, fmt.Errorf("tool call of %d bytes is over the %d-byte limit", len(raw), maxCallBytes)
	}
	if ts.deferral != nil {
		if c, ok, err := ts.parseSearchCall(raw); ok {
			return c, err
		}
	}
	c, err := ts.api.parseCall(raw)
	if err != nil {
		return c, err
	}
	if c.Name == "" {
		return c, fmt.Errorf("%s tool call without a name", ts.api.format())
	}
	return c, nil
}

// Run calls the tool c names: the arguments are mapped back to the server's schema (see
// Adapted.MapArguments), then the tool's Handler validates and runs them. Failures are in
// Result.Err, and their text in Result.Text, for the model to read.
func (ts *Toolset) Run(ctx context.Context, c Call) Result {
	if ts.deferral != nil && ts.deferral.search != "" && c.Name == ts.deferral.search {
		return ts.runSearch(c)
	}
	i, ok := ts.byName[c.Name]
	if !ok {
		err := fmt.Errorf("%w %q", bridge.ErrUnknownTool, c.Name)
		return Result{Call: c, Text: "error: " + err.Error(), Err: err}
	}
	e := ts.tools[i]
	if e.tool.Handler == nil {
		err := fmt.Errorf("tool %q has no handler", c.Name)
		return Result{Call: c, Text: "error: " + err.Error(), Err: err}
	}
	args := c.Arguments
	if e.adapted != nil {
		mapped, err := e.adapted.MapArguments(args)
		if err == nil {
			args = mapped
		} // else: the Handler reports the arguments as invalid
	}
	text, err := e.tool.Handler(ctx, args)
	if err != nil {
		var te *results.ToolError
		if !errors.As(err, &te) {
			text = "error: " + err.Error()
		} else if text == "" {
			text = te.Text
		}
	}
	return Result{Call: c, Text: text, Err: err}
}

// ResultMessage is r as the toolset's format takes it back (each Format constant says in
// what shape).
func (ts *Toolset) ResultMessage(r Result) json.RawMessage {
	if ts.deferral != nil && ts.deferral.search != "" && r.Call.Name == ts.deferral.search {
		if m := ts.searchResultMessage(r); m != nil {
			return m
		}
	}
	var b bytes.Buffer
	ts.api.writeResult(&b, r)
	return b.Bytes()
}

// Handle is ParseCall, Run and ResultMessage in one: a model's tool-call object in, the
// tool-result object to send back out. Its error is only for a call object it cannot read
// (there is then nothing to answer); a failing tool is an error result for the model.
func (ts *Toolset) Handle(ctx context.Context, call json.RawMessage) (json.RawMessage, error) {
	c, err := ts.ParseCall(call)
	if err != nil {
		return nil, err
	}
	return ts.ResultMessage(ts.Run(ctx, c)), nil
}
