// Package anthropic hands bridge tools to the Anthropic Go SDK as the SDK's own types, for
// the Messages API, and answers the model's tool_use blocks with the SDK's tool_result
// blocks. The SDK is github.com/anthropics/anthropic-sdk-go/v2 — the /v2 module: a plain
// `go get github.com/anthropics/anthropic-sdk-go` gives v1, whose types these are not.
//
//	tools, err := mcpanthropic.NewMessages(set.Tools(), nil)
//	params.Tools = tools.Tools()
//	for _, block := range message.Content {
//		if block.Type == "tool_use" {
//			result, err := tools.Call(ctx, block.AsToolUse()) // a tool_result block
//		}
//	}
//
// The package is named like the SDK's; import it under another name (mcpanthropic) beside
// it. It is its own module, so only programs that use it depend on the SDK.
//
// Messages is a provider.Toolset (package bridge/provider) in the SDK's types: the
// provider.Options choose schema adaptation and deferred loading exactly as there, and
// provider's format is the one definition of the shapes (the glue decodes them into the
// SDK's params once, inside). Schemas stay as the server sent them (or as provider adapted
// them): each tool's InputSchema holds "properties" and every member other than "type" and
// "required" as json.RawMessage, so property order and number spelling reach the API
// unchanged.
//
// Call runs one tool call and always returns the tool_result block for the next user
// message. Its error is nil when the model is the one to act: the tool's own failure,
// invalid arguments, a tool name it made up — those are tool_result blocks with is_error set
// and text that says what went wrong. A transport or protocol failure, a timeout or a closed
// server is returned as the Go error (as bridge.ForModel sorts them) together with the block
// (is_error, the error's text), so the host decides whether the run goes on.
//
// With provider.Options.Defer deferred tools carry defer_loading and a tool search tool is
// added: Anthropic's own (provider.SearchHosted, SearchRegex) or a search_tools tool whose
// tool_result Call answers with tool_reference blocks.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
)

// Messages is a set of bridge tools for the Messages API, and one conversation's way back
// from the model's tool_use blocks. Safe for concurrent use.
type Messages struct {
	ts   *provider.Toolset
	conv *provider.Conversation
}

// NewMessages converts tools for the Messages API (provider.FormatAnthropic). Every tool's
// definition is decoded into the SDK's param type here, so a tool the SDK cannot carry is an
// error now, not a request that fails later.
func NewMessages(tools []bridge.Tool, opts *provider.Options) (*Messages, error) {
	ts, err := provider.New(provider.FormatAnthropic, tools, opts)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	all := ts
	if opts != nil && opts.Defer != nil { // not every tool is in the request: check them all
		o := *opts
		o.Defer = nil
		if all, err = provider.New(provider.FormatAnthropic, tools, &o); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
	}
	for _, m := range []json.Marshaler{all, ts} {
		if _, err := marshalDecode(m); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
	}
	return &Messages{ts: ts, conv: ts.Conversation()}, nil
}

// Tools is the request's tools (MessageNewParams.Tools): every tool, or with deferred
// loading every tool (the deferred ones with defer_loading) and the search tool. Each call
// returns new values the caller may change.
func (m *Messages) Tools() []anthropic.ToolUnionParam {
	out, _ := marshalDecode(m.conv) // checked by NewMessages: cannot fail
	return out
}

// Call runs one tool_use block and returns the tool_result block that answers it (its
// OfToolResult is the ToolResultBlockParam), for the next user message. The error is nil
// unless the tool could not be reached (see the package doc); the block is always usable.
func (m *Messages) Call(ctx context.Context, block anthropic.ToolUseBlock) (anthropic.ContentBlockParamUnion, error) {
	r := m.conv.Run(ctx, provider.Call{ID: block.ID, Name: block.Name, Arguments: block.Input})
	var out anthropic.ContentBlockParamUnion
	if err := json.Unmarshal(m.ts.ResultMessage(r), &out); err != nil {
		return out, fmt.Errorf("anthropic tool %q: decoding the tool_result: %w", r.Call.Name, err)
	}
	if out.OfToolResult == nil {
		return out, fmt.Errorf("anthropic tool %q: the SDK does not read the tool_result", r.Call.Name)
	}
	_, err := bridge.ForModel(r.Text, r.Err)
	return out, err
}

// Conversation starts another conversation over the same tools.
func (m *Messages) Conversation() *Messages { return &Messages{ts: m.ts, conv: m.ts.Conversation()} }

// Toolset is the provider.Toolset behind m: its Reports say what was adapted per tool.
func (m *Messages) Toolset() *provider.Toolset { return m.ts }

// marshalDecode is m's tools array in the SDK's params, each schema kept as sent.
func marshalDecode(m json.Marshaler) ([]anthropic.ToolUnionParam, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var tools []anthropic.ToolUnionParam
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, fmt.Errorf("decoding the tools into the SDK's params: %w", err)
	}
	var raw []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	if len(raw) != len(tools) {
		return nil, fmt.Errorf("the SDK read %d of %d tools", len(tools), len(raw))
	}
	for i := range tools {
		t, r := tools[i].OfTool, raw[i]
		switch {
		case t == nil && r.Type != "":
			continue // Anthropic's own tool search tool: nothing of ours in it
		case t == nil:
			return nil, fmt.Errorf("tool %q: the SDK does not read it as a tool", r.Name)
		case r.InputSchema == nil:
			continue
		}
		if err := keepSchema(&t.InputSchema, r.InputSchema); err != nil {
			return nil, fmt.Errorf("tool %q: %w", r.Name, err)
		}
	}
	return tools, nil
}

// keepSchema sets s's members to schema's JSON text: "properties" and every member but
// "type" and "required" (which the SDK holds as its own types) go out as written.
func keepSchema(s *anthropic.ToolInputSchemaParam, schema json.RawMessage) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(schema, &members); err != nil {
		return fmt.Errorf("input_schema: %w", err)
	}
	s.Properties, s.ExtraFields = nil, nil
	for k, v := range members {
		switch k {
		case "type", "required":
		case "properties":
			s.Properties = v
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return nil
}
