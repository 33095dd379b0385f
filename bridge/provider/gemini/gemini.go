// Package gemini hands bridge tools to Google's Gen AI Go SDK (google.golang.org/genai) as
// the SDK's own types, for generateContent, and answers the model's function calls with the
// SDK's functionResponse parts:
//
//	fns, err := gemini.NewFunctions(set.Tools(), &provider.Options{Adapt: true})
//	config.Tools = fns.Tools()
//	for _, call := range resp.FunctionCalls() {
//		part, err := fns.Call(ctx, call) // a functionResponse part for the next user content
//	}
//
// It is its own module, so only programs that use it depend on genai (and its gRPC and
// cloud.google.com requirements).
//
// Functions is a provider.Toolset (package bridge/provider) in the SDK's types: the
// provider.Options choose the schema field, adaptation and deferred loading exactly as
// there, and provider's format is the one definition of the shapes (the glue decodes them
// into the SDK's types once, inside). By default each schema goes in ParametersJsonSchema as
// json.RawMessage, so the values hold property order and number spelling as the server wrote
// them; genai's client, though, re-encodes every request through map[string]any, so on the
// wire the keys are sorted and numbers are float64 (the schema is the server's by value,
// except integers beyond 2^53). With
// provider.Options.GeminiParameters it goes in Parameters, a *genai.Schema: properties are
// then a map (the order is lost unless the schema has propertyOrdering) and numbers are
// float64. The model's arguments come as FunctionCall.Args, a map: their order is the
// encoder's and integers beyond 2^53 are already rounded by the SDK.
//
// Call runs one function call and always returns the part that answers it. Its error is nil
// when the model is the one to act: the tool's own failure, invalid arguments, a function
// name it made up — the part's response is then {"error": text} (Gemini's convention for a
// failed function) instead of {"output": text}. A transport or protocol failure, a timeout
// or a closed server is returned as the Go error (as bridge.ForModel sorts them) together
// with the part, so the host decides whether the run goes on.
//
// With provider.Options.Defer the model starts with a search_tools function; Tools grows
// with what the conversation's searches loaded, and Conversation starts another.
package gemini

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"google.golang.org/genai"
)

// Functions is a set of bridge tools for generateContent, and one conversation's way back
// from the model's function calls. Safe for concurrent use.
type Functions struct {
	ts   *provider.Toolset
	conv *provider.Conversation
}

// NewFunctions converts tools for generateContent (provider.FormatGemini). Every tool's
// declaration is decoded into the SDK's type here, so a tool the SDK cannot carry is an
// error now, not a request that fails later.
func NewFunctions(tools []bridge.Tool, opts *provider.Options) (*Functions, error) {
	ts, err := provider.New(provider.FormatGemini, tools, opts)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	all := ts
	if opts != nil && opts.Defer != nil { // not every tool is in the first request: check them all
		o := *opts
		o.Defer = nil
		if all, err = provider.New(provider.FormatGemini, tools, &o); err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
	}
	for _, m := range []json.Marshaler{all, ts} {
		if _, err := marshalDecode(m); err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
	}
	return &Functions{ts: ts, conv: ts.Conversation()}, nil
}

// Tools is the request's tools (GenerateContentConfig.Tools): one genai.Tool holding every
// function declaration, or with deferred loading the loaded ones, the search function and
// what the conversation's searches loaded so far. Each call returns new values the caller
// may change.
func (f *Functions) Tools() []*genai.Tool {
	out, _ := marshalDecode(f.conv) // checked by NewFunctions: cannot fail
	return out
}

// Call runs one function call and returns the part that answers it, for the next content
// with role "user". The error is nil unless the tool could not be reached (see the package
// doc); the part is always usable.
func (f *Functions) Call(ctx context.Context, call *genai.FunctionCall) (*genai.Part, error) {
	if call == nil {
		return nil, fmt.Errorf("gemini: nil function call")
	}
	args, err := json.Marshal(call.Args)
	if err != nil {
		return nil, fmt.Errorf("gemini function %q: arguments: %w", call.Name, err)
	}
	r := f.conv.Run(ctx, provider.Call{ID: call.ID, Name: call.Name, Arguments: args})
	var part genai.Part
	if err := json.Unmarshal(f.ts.ResultMessage(r), &part); err != nil {
		return nil, fmt.Errorf("gemini function %q: decoding the functionResponse: %w", call.Name, err)
	}
	if part.FunctionResponse == nil {
		return nil, fmt.Errorf("gemini function %q: the SDK does not read the functionResponse", call.Name)
	}
	_, err = bridge.ForModel(r.Text, r.Err)
	return &part, err
}

// Conversation starts another conversation over the same tools (it matters only with
// deferred loading: what one conversation's searches loaded is not sent in another's).
func (f *Functions) Conversation() *Functions {
	return &Functions{ts: f.ts, conv: f.ts.Conversation()}
}

// Toolset is the provider.Toolset behind f: its Reports say what was adapted per tool.
func (f *Functions) Toolset() *provider.Toolset { return f.ts }

// marshalDecode is m's tools array in the SDK's types, each parametersJsonSchema kept as
// sent.
func marshalDecode(m json.Marshaler) ([]*genai.Tool, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var tools []*genai.Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, fmt.Errorf("decoding the tools into the SDK's types: %w", err)
	}
	var raw []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	if len(raw) != len(tools) {
		return nil, fmt.Errorf("the SDK read %d of %d tools", len(tools), len(raw))
	}
	for i, t := range tools {
		if t == nil || len(t.FunctionDeclarations) != len(raw[i].FunctionDeclarations) {
			return nil, fmt.Errorf("tool %d: the SDK did not read every function declaration", i)
		}
		for j, d := range t.FunctionDeclarations {
			if s := raw[i].FunctionDeclarations[j].ParametersJSONSchema; d != nil && s != nil {
				d.ParametersJsonSchema = s
			}
		}
	}
	return tools, nil
}
