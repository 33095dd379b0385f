package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	// arguments wrap bridge.ErrInvalidArguments; an unknown tool is ErrUnknownTool.
	Err error
}

// ErrUnknownTool is Result.Err when the model called a tool the toolset does not have.
var ErrUnknownTool = errors.New("unknown tool")

// ParseCall reads one tool call as the toolset's format delivers it:
//   - openai: an element of message.tool_calls: {"id", "type": "function", "function":
//     {"name", "arguments": "<JSON text>"}}
//   - openai-responses: an output item {"type": "function_call", "call_id", "name",
//     "arguments": "<JSON text>"}
//   - anthropic: a content block {"type": "tool_use", "id", "name", "input": {...}}
//   - gemini: a part {"functionCall": {"id", "name", "args": {...}}}, or the functionCall
//     object itself
func (ts *Toolset) ParseCall(raw json.RawMessage) (Call, error) {
	if len(raw) > maxCallBytes {
		return Call{}, fmt.Errorf("tool call of %d bytes is over the %d-byte limit", len(raw), maxCallBytes)
	}
	var c Call
	switch ts.format {
	case FormatOpenAI:
		var m struct {
			ID       string `json:"id"`
			Function *struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return c, fmt.Errorf("openai tool call: %w", err)
		}
		if m.Function == nil {
			return c, errors.New(`openai tool call: no "function"`)
		}
		c = Call{ID: m.ID, Name: m.Function.Name, Arguments: json.RawMessage(m.Function.Arguments)}
	case FormatOpenAIResponses:
		var m struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return c, fmt.Errorf("openai-responses tool call: %w", err)
		}
		if m.Type != "" && m.Type != "function_call" {
			return c, fmt.Errorf("openai-responses tool call: type %q, want function_call", m.Type)
		}
		c = Call{ID: m.CallID, Name: m.Name, Arguments: json.RawMessage(m.Arguments)}
	case FormatAnthropic:
		var m struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return c, fmt.Errorf("anthropic tool_use: %w", err)
		}
		if m.Type != "" && m.Type != "tool_use" {
			return c, fmt.Errorf("anthropic tool_use: type %q, want tool_use", m.Type)
		}
		c = Call{ID: m.ID, Name: m.Name, Arguments: m.Input}
	case FormatGemini:
		type fc struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		var m struct {
			FunctionCall *fc `json:"functionCall"`
			fc
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return c, fmt.Errorf("gemini functionCall: %w", err)
		}
		f := m.fc
		if m.FunctionCall != nil {
			f = *m.FunctionCall
		}
		c = Call{ID: f.ID, Name: f.Name, Arguments: f.Args}
	}
	if c.Name == "" {
		return c, fmt.Errorf("%s tool call without a name", ts.format)
	}
	return c, nil
}

// Run calls the tool c names: the arguments are mapped back to the server's schema (see
// Adapted.MapArguments), then the tool's Handler validates and runs them. Failures are in
// Result.Err, and their text in Result.Text, for the model to read.
func (ts *Toolset) Run(ctx context.Context, c Call) Result {
	i, ok := ts.byName[c.Name]
	if !ok {
		err := fmt.Errorf("%w %q", ErrUnknownTool, c.Name)
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

// ResultMessage is r as the toolset's format takes it back:
//   - openai: a message {"role": "tool", "tool_call_id", "content"}
//   - openai-responses: an input item {"type": "function_call_output", "call_id", "output"}
//   - anthropic: a content block {"type": "tool_result", "tool_use_id", "content",
//     "is_error"} for the next user message
//   - gemini: a part {"functionResponse": {"id", "name", "response": {"output"}}}, with
//     "error" instead of "output" on failure, for the next user content
func (ts *Toolset) ResultMessage(r Result) json.RawMessage {
	var b bytes.Buffer
	field := func(k, v string) {
		encodeString(&b, k)
		b.WriteByte(':')
		encodeString(&b, v)
	}
	switch ts.format {
	case FormatOpenAI:
		b.WriteString(`{"role":"tool",`)
		field("tool_call_id", r.Call.ID)
		b.WriteByte(',')
		field("content", r.Text)
		b.WriteByte('}')
	case FormatOpenAIResponses:
		b.WriteString(`{"type":"function_call_output",`)
		field("call_id", r.Call.ID)
		b.WriteByte(',')
		field("output", r.Text)
		b.WriteByte('}')
	case FormatAnthropic:
		b.WriteString(`{"type":"tool_result",`)
		field("tool_use_id", r.Call.ID)
		b.WriteByte(',')
		field("content", r.Text)
		if r.Err != nil {
			b.WriteString(`,"is_error":true`)
		}
		b.WriteByte('}')
	case FormatGemini:
		b.WriteString(`{"functionResponse":{`)
		if r.Call.ID != "" {
			field("id", r.Call.ID)
			b.WriteByte(',')
		}
		field("name", r.Call.Name)
		b.WriteString(`,"response":{`)
		if r.Err != nil {
			field("error", r.Text)
		} else {
			field("output", r.Text)
		}
		b.WriteString("}}}")
	}
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
