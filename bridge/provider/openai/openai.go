// Package openai hands bridge tools to the OpenAI Go SDK (github.com/openai/openai-go/v3) as
// the SDK's own types, for Chat Completions (Chat) and for the Responses API (Responses), and
// answers the model's tool calls with the SDK's own tool-result params:
//
//	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Strict: true})
//	params.Tools = chat.Tools()
//	for _, call := range completion.Choices[0].Message.ToolCalls {
//		msg, err := chat.Call(ctx, call) // a "tool" message for params.Messages
//	}
//
// The package is named like the SDK's; import it under another name (mcpopenai) beside it.
// It is its own module, so only programs that use it depend on openai-go (held at v3.60.0:
// later versions need Go 1.26).
//
// Both types are a provider.Toolset (package bridge/provider) in the SDK's types: the
// provider.Options choose strict mode, schema adaptation and deferred loading exactly as
// there, and provider's formats are the one definition of the shapes (the glue decodes them
// into the SDK's params once, inside). Schemas stay as the server sent them (or as provider
// adapted them): each function's Parameters map holds the schema's members as
// json.RawMessage, so property order and number spelling reach the API unchanged.
//
// Call runs one tool call and always returns the message the model reads. Its error is nil
// when the model is the one to act: the tool's own failure, invalid arguments, a tool name it
// made up (the text says what went wrong; OpenAI has no error flag on tool results). A
// transport or protocol failure, a timeout or a closed server is returned as the Go error
// (as bridge.ForModel sorts them) together with the message, so the host decides whether the run
// goes on.
//
// With provider.Options.Defer the model starts with a search tool. A Chat or Responses value
// is one conversation (its Tools grow with what the model's searches loaded, for Chat
// Completions); Conversation starts another over the same tools. Responses.Search answers
// the API's client-executed tool_search_call items.
package openai

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
)

// Chat is a set of bridge tools for Chat Completions, and one conversation's way back from
// the model's tool calls. Safe for concurrent use.
type Chat struct {
	ts   *provider.Toolset
	conv *provider.Conversation
}

// NewChat converts tools for Chat Completions (provider.FormatOpenAI). Every tool's
// definition is decoded into the SDK's param type here, so a tool the SDK cannot carry is an
// error now, not a request that fails later.
func NewChat(tools []bridge.Tool, opts *provider.Options) (*Chat, error) {
	ts, err := newToolset(provider.FormatOpenAI, tools, opts, decodeChatTools)
	if err != nil {
		return nil, err
	}
	return &Chat{ts: ts, conv: ts.Conversation()}, nil
}

// Tools is the request's tools for the conversation's next turn (ChatCompletionNewParams.Tools):
// every tool, or with deferred loading the loaded ones, the search function and what the
// model's searches loaded so far. Each call returns new values the caller may change.
func (c *Chat) Tools() []openai.ChatCompletionToolUnionParam {
	out, _ := marshalDecode(c.conv, decodeChatTools) // checked by NewChat: cannot fail
	return out
}

// Call runs one tool call of the assistant message and returns the "tool" message that
// answers it (its OfTool is the ChatCompletionToolMessageParam). The error is nil unless the
// tool could not be reached (see the package doc); the message is always usable.
func (c *Chat) Call(ctx context.Context, call openai.ChatCompletionMessageToolCallUnion) (openai.ChatCompletionMessageParamUnion, error) {
	r := c.conv.Run(ctx, provider.Call{ID: call.ID, Name: call.Function.Name, Arguments: json.RawMessage(call.Function.Arguments)})
	var msg openai.ChatCompletionMessageParamUnion
	if err := json.Unmarshal(c.ts.ResultMessage(r), &msg); err != nil {
		return msg, fmt.Errorf("openai tool %q: decoding the tool message: %w", r.Call.Name, err)
	}
	return msg, hostError(r)
}

// Conversation starts another conversation over the same tools (it matters only with
// deferred loading: what one conversation's searches loaded is not sent in another's).
func (c *Chat) Conversation() *Chat { return &Chat{ts: c.ts, conv: c.ts.Conversation()} }

// Toolset is the provider.Toolset behind c: its Reports say what was adapted per tool.
func (c *Chat) Toolset() *provider.Toolset { return c.ts }

// Responses is a set of bridge tools for the Responses API, and one conversation's way back
// from the model's function calls. Safe for concurrent use.
type Responses struct {
	ts   *provider.Toolset
	conv *provider.Conversation
}

// NewResponses converts tools for the Responses API (provider.FormatOpenAIResponses). Every
// tool's definition is decoded into the SDK's param type here.
func NewResponses(tools []bridge.Tool, opts *provider.Options) (*Responses, error) {
	ts, err := newToolset(provider.FormatOpenAIResponses, tools, opts, decodeResponsesTools)
	if err != nil {
		return nil, err
	}
	return &Responses{ts: ts, conv: ts.Conversation()}, nil
}

// Tools is the request's tools (responses.ResponseNewParams.Tools): every function, or with
// deferred loading the loaded ones, one namespace per server holding its deferred functions,
// and the tool_search tool. Each call returns new values the caller may change.
func (r *Responses) Tools() []responses.ToolUnionParam {
	out, _ := marshalDecode(r.conv, decodeResponsesTools) // checked by NewResponses: cannot fail
	return out
}

// Call runs one function_call output item and returns the function_call_output input item
// that answers it. The error is nil unless the tool could not be reached (see the package
// doc); the item is always usable.
func (r *Responses) Call(ctx context.Context, call responses.ResponseFunctionToolCall) (responses.ResponseInputItemUnionParam, error) {
	res := r.conv.Run(ctx, provider.Call{ID: call.CallID, Name: call.Name, Arguments: json.RawMessage(call.Arguments)})
	item, err := decodeInputItem(r.ts.ResultMessage(res))
	if err != nil {
		return item, fmt.Errorf("openai-responses tool %q: %w", res.Call.Name, err)
	}
	return item, hostError(res)
}

// Search answers a client-executed tool_search_call output item (deferred loading with
// provider.SearchClient) with a tool_search_output input item holding the functions the
// bridge's index found, in their servers' namespaces. A server-executed search has nothing
// to answer: that is an error.
func (r *Responses) Search(ctx context.Context, call responses.ResponseToolSearchCall) (responses.ResponseInputItemUnionParam, error) {
	args, err := json.Marshal(call.Arguments)
	if err != nil {
		return responses.ResponseInputItemUnionParam{}, fmt.Errorf("openai-responses tool_search_call %q: arguments: %w", call.CallID, err)
	}
	raw, err := json.Marshal(struct {
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Execution string          `json:"execution"`
		Arguments json.RawMessage `json:"arguments"`
	}{"tool_search_call", call.CallID, string(call.Execution), args})
	if err != nil {
		return responses.ResponseInputItemUnionParam{}, err
	}
	c, err := r.ts.ParseCall(raw)
	if err != nil {
		return responses.ResponseInputItemUnionParam{}, err
	}
	res := r.conv.Run(ctx, c)
	item, err := decodeInputItem(r.ts.ResultMessage(res))
	if err != nil {
		return item, fmt.Errorf("openai-responses tool_search_call %q: %w", call.CallID, err)
	}
	return item, hostError(res)
}

// Conversation starts another conversation over the same tools.
func (r *Responses) Conversation() *Responses {
	return &Responses{ts: r.ts, conv: r.ts.Conversation()}
}

// Toolset is the provider.Toolset behind r: its Reports say what was adapted per tool.
func (r *Responses) Toolset() *provider.Toolset { return r.ts }

// hostError is r's error when it is the host's to handle, as bridge.ForModel sorts them.
func hostError(r provider.Result) error {
	_, err := bridge.ForModel(r.Text, r.Err)
	return err
}

// newToolset builds the toolset and checks that the SDK takes every tool's definition: with
// deferred loading not every tool is in the first request, so all of them are decoded once
// from a toolset without deferral.
func newToolset[T any](format provider.Format, tools []bridge.Tool, opts *provider.Options, decode func([]byte) ([]T, error)) (*provider.Toolset, error) {
	ts, err := provider.New(format, tools, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", format, err)
	}
	all := ts
	if opts != nil && opts.Defer != nil {
		o := *opts
		o.Defer = nil
		if all, err = provider.New(format, tools, &o); err != nil {
			return nil, fmt.Errorf("%s: %w", format, err)
		}
	}
	if _, err := marshalDecode(all, decode); err != nil {
		return nil, fmt.Errorf("%s: %w", format, err)
	}
	if all != ts {
		if _, err := marshalDecode(ts.Conversation(), decode); err != nil {
			return nil, fmt.Errorf("%s: %w", format, err)
		}
	}
	return ts, nil
}

// marshalDecode is m's tools array decoded by decode.
func marshalDecode[T any](m json.Marshaler, decode func([]byte) ([]T, error)) ([]T, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return decode(b)
}

// decodeChatTools decodes a Chat Completions tools array into the SDK's params, each
// function's schema kept as sent.
func decodeChatTools(b []byte) ([]openai.ChatCompletionToolUnionParam, error) {
	var tools []openai.ChatCompletionToolUnionParam
	var raw []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := decodeBoth(b, &tools, &raw); err != nil {
		return nil, err
	}
	for i := range tools {
		f, p := tools[i].OfFunction, raw[i].Function
		if f == nil {
			return nil, fmt.Errorf("tool %d (%q): the SDK does not read it as a function", i, p.Name)
		}
		if p.Parameters == nil {
			continue
		}
		m, err := schemaMap(p.Parameters)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", p.Name, err)
		}
		f.Function.Parameters = m
	}
	return tools, nil
}

// respTool is a Responses tools-array element's schemas: a function's parameters, a
// namespace's functions' parameters, a client tool_search's parameters.
type respTool struct {
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	Tools      []struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// decodeResponsesTools decodes a Responses tools array into the SDK's params, each schema
// kept as sent.
func decodeResponsesTools(b []byte) ([]responses.ToolUnionParam, error) {
	var tools []responses.ToolUnionParam
	var raw []respTool
	if err := decodeBoth(b, &tools, &raw); err != nil {
		return nil, err
	}
	if err := keepResponsesSchemas(tools, raw); err != nil {
		return nil, err
	}
	return tools, nil
}

func keepResponsesSchemas(tools []responses.ToolUnionParam, raw []respTool) error {
	for i := range tools {
		t, r := &tools[i], raw[i]
		switch {
		case t.OfFunction != nil:
			if r.Parameters == nil {
				continue
			}
			m, err := schemaMap(r.Parameters)
			if err != nil {
				return fmt.Errorf("tool %q: %w", r.Name, err)
			}
			t.OfFunction.Parameters = m
		case t.OfNamespace != nil:
			if len(t.OfNamespace.Tools) != len(r.Tools) {
				return fmt.Errorf("namespace %q: the SDK read %d of %d functions", r.Name, len(t.OfNamespace.Tools), len(r.Tools))
			}
			for j, f := range t.OfNamespace.Tools {
				if f.OfFunction == nil {
					return fmt.Errorf("namespace %q: tool %q: the SDK does not read it as a function", r.Name, r.Tools[j].Name)
				}
				if r.Tools[j].Parameters != nil {
					f.OfFunction.Parameters = r.Tools[j].Parameters
				}
			}
		case t.OfToolSearch != nil:
			if r.Parameters != nil {
				t.OfToolSearch.Parameters = r.Parameters
			}
		default:
			return fmt.Errorf("tool %d (%q): the SDK reads no function, namespace or tool_search", i, r.Name)
		}
	}
	return nil
}

// decodeInputItem decodes a function_call_output or tool_search_output item, the functions
// of the latter with their schemas as sent.
func decodeInputItem(b []byte) (responses.ResponseInputItemUnionParam, error) {
	var item responses.ResponseInputItemUnionParam
	var raw struct {
		Type  string     `json:"type"`
		Tools []respTool `json:"tools"`
	}
	if err := json.Unmarshal(b, &item); err != nil {
		return item, fmt.Errorf("decoding the %s item: %w", raw.Type, err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return item, err
	}
	switch {
	case raw.Type == "function_call_output" && item.OfFunctionCallOutput != nil:
		return item, nil
	case raw.Type == "tool_search_output" && item.OfToolSearchOutput != nil:
		if len(item.OfToolSearchOutput.Tools) != len(raw.Tools) {
			return item, fmt.Errorf("tool_search_output: the SDK read %d of %d tools", len(item.OfToolSearchOutput.Tools), len(raw.Tools))
		}
		return item, keepResponsesSchemas(item.OfToolSearchOutput.Tools, raw.Tools)
	}
	return item, fmt.Errorf("the SDK does not read a %q item", raw.Type)
}

// decodeBoth decodes b into the SDK's slice and into our view of the same array.
func decodeBoth[T, R any](b []byte, sdk *[]T, raw *[]R) error {
	if err := json.Unmarshal(b, sdk); err != nil {
		return fmt.Errorf("decoding the tools into the SDK's params: %w", err)
	}
	if err := json.Unmarshal(b, raw); err != nil {
		return err
	}
	if len(*sdk) != len(*raw) {
		return fmt.Errorf("the SDK read %d of %d tools", len(*sdk), len(*raw))
	}
	return nil
}

// schemaMap is a JSON object as a map whose values are the members' JSON text, so the SDK
// sends each member as it is (order inside, number spelling); only the top-level members'
// order is the encoder's.
func schemaMap(schema json.RawMessage) (map[string]any, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(schema, &members); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	m := make(map[string]any, len(members))
	for k, v := range members {
		m[k] = v
	}
	return m, nil
}
