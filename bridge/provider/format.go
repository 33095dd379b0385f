package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file is how a provider format is defined. Each model API is one value in apis: a type
// implementing api, holding the API's envelope (the shape of its tool list), its call parser
// (a tool call in), its result message (a tool result out) and its schema choice (the
// Target its tools' schemas are written for, per Options). Formats, ParseFormat, New,
// Toolset.MarshalJSON, ParseCall and ResultMessage all go through that value, so a new
// model API is one new type here, its Format constant, and one line in apis; per-format
// behaviour added later is one more method on api.

// Format is a model API's request shape for tools.
type Format string

// The formats. Each names one value in apis; its doc says the three shapes it speaks.
const (
	// FormatOpenAI is Chat Completions.
	//   - tools: [{"type":"function","function":{name, description, parameters, strict}}]
	//   - a call: an element of message.tool_calls: {"id", "type": "function", "function":
	//     {"name", "arguments": "<JSON text>"}}
	//   - a result: a message {"role": "tool", "tool_call_id", "content"}
	FormatOpenAI Format = "openai"
	// FormatOpenAIResponses is the Responses API. Responses defaults strict to true, so it
	// is always sent.
	//   - tools: [{"type":"function", name, description, parameters, strict}]
	//   - a call: an output item {"type": "function_call", "call_id", "name",
	//     "arguments": "<JSON text>"}
	//   - a result: an input item {"type": "function_call_output", "call_id", "output"}
	FormatOpenAIResponses Format = "openai-responses"
	// FormatAnthropic is the Messages API.
	//   - tools: [{name, description, input_schema}]
	//   - a call: a content block {"type": "tool_use", "id", "name", "input": {...}}
	//   - a result: a content block {"type": "tool_result", "tool_use_id", "content",
	//     "is_error"} for the next user message
	FormatAnthropic Format = "anthropic"
	// FormatGemini is generateContent.
	//   - tools: [{"functionDeclarations":[{name, description, parametersJsonSchema}]}]
	//     (or "parameters" with Options.GeminiParameters)
	//   - a call: a part {"functionCall": {"id", "name", "args": {...}}}, or the
	//     functionCall object itself
	//   - a result: a part {"functionResponse": {"id", "name", "response": {"output"}}},
	//     with "error" instead of "output" on failure, for the next user content
	FormatGemini Format = "gemini"
)

// api is one model API's format: everything a Toolset does differently per API.
type api interface {
	// format is the Format that selects this API.
	format() Format
	// schemas says which Target the tools' schemas are written for under o.
	schemas(o Options) schemaPlan
	// writeTools writes the request's "tools" array: the envelope around every tool.
	writeTools(b *bytes.Buffer, tools []entry) error
	// parseCall reads one tool-call object as the API delivers it.
	parseCall(raw json.RawMessage) (Call, error)
	// writeResult writes r as the API takes a tool result back.
	writeResult(b *bytes.Buffer, r Result)

	// Deferred loading (defer_format.go):
	// searches says whether the API offers search mode m.
	searches(m SearchMode) bool
	// writeDeferred writes the "tools" array of a deferred toolset: upfront leaves out what
	// the model does not read before it searches; loaded are entries a Conversation loaded.
	writeDeferred(ts *Toolset, upfront bool, loaded []bool) ([]byte, error)
	// searchTool is the search tool's definition.
	searchTool(df *deferral) []byte
	// parseSearch reads a search call that is not an ordinary tool call (ok false: none).
	parseSearch(df *deferral, raw json.RawMessage) (c Call, ok bool, err error)
	// writeSearchResult writes a search's result where the API has its own shape; nil: the
	// ordinary result message, carrying Result.Text.
	writeSearchResult(ts *Toolset, r Result) json.RawMessage
}

// apis is every format, in the order Formats lists them.
var apis = []api{openAIChat{}, openAIResponses{}, anthropicMessages{}, geminiContent{}}

// schemaPlan is where a format sends tool schemas under one Options.
type schemaPlan struct {
	// primary is the field schemas are written for.
	primary Target
	// adapt rewrites each schema for primary (see Adapt); false sends the server's bytes.
	adapt bool
	// fallback is the field used, adapted, for a tool that still has findings after
	// adapting for primary; "" keeps primary.
	fallback Target
	// fallbackNote is Report.Fallback for a tool sent in fallback.
	fallbackNote string
}

// Formats lists every format.
func Formats() []Format {
	out := make([]Format, len(apis))
	for i, a := range apis {
		out[i] = a.format()
	}
	return out
}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	if a, ok := apiFor(Format(s)); ok {
		return a.format(), nil
	}
	return "", unknownFormat(s)
}

func unknownFormat(s string) error {
	names := make([]string, len(apis))
	for i, a := range apis {
		names[i] = string(a.format())
	}
	last := len(names) - 1
	return fmt.Errorf("unknown format %q (want %s or %s)", s, strings.Join(names[:last], ", "), names[last])
}

func apiFor(f Format) (api, bool) {
	for _, a := range apis {
		if a.format() == f {
			return a, true
		}
	}
	return nil, false
}

// openAISchemas is the schema choice of both OpenAI APIs: they check function parameters
// the same way. Strict adapts for strict mode and falls back to "strict": false.
func openAISchemas(o Options) schemaPlan {
	if o.Strict {
		return schemaPlan{primary: OpenAIStrict, adapt: true, fallback: OpenAI, fallbackNote: "strict: false"}
	}
	return schemaPlan{primary: OpenAI, adapt: o.Adapt}
}

// openAIChat is FormatOpenAI.
type openAIChat struct{}

func (openAIChat) format() Format               { return FormatOpenAI }
func (openAIChat) schemas(o Options) schemaPlan { return openAISchemas(o) }

func (openAIChat) writeTools(b *bytes.Buffer, tools []entry) error {
	return writeArray(b, tools, func(e entry, schema []byte) {
		b.WriteString(`{"type":"function","function":{`)
		writeNameDescription(b, e)
		b.WriteByte(',')
		writeKey(b, "parameters")
		b.Write(schema)
		fmt.Fprintf(b, `,"strict":%t}}`, e.target == OpenAIStrict)
	})
}

func (openAIChat) parseCall(raw json.RawMessage) (Call, error) {
	var m struct {
		ID       string `json:"id"`
		Function *struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Call{}, fmt.Errorf("openai tool call: %w", err)
	}
	if m.Function == nil {
		return Call{}, errors.New(`openai tool call: no "function"`)
	}
	return Call{ID: m.ID, Name: m.Function.Name, Arguments: json.RawMessage(m.Function.Arguments)}, nil
}

func (openAIChat) writeResult(b *bytes.Buffer, r Result) {
	b.WriteString(`{"role":"tool",`)
	writeField(b, "tool_call_id", r.Call.ID)
	b.WriteByte(',')
	writeField(b, "content", r.Text)
	b.WriteByte('}')
}

// openAIResponses is FormatOpenAIResponses.
type openAIResponses struct{}

func (openAIResponses) format() Format               { return FormatOpenAIResponses }
func (openAIResponses) schemas(o Options) schemaPlan { return openAISchemas(o) }

func (openAIResponses) writeTools(b *bytes.Buffer, tools []entry) error {
	return writeArray(b, tools, func(e entry, schema []byte) {
		b.WriteString(`{"type":"function",`)
		writeNameDescription(b, e)
		b.WriteByte(',')
		writeKey(b, "parameters")
		b.Write(schema)
		fmt.Fprintf(b, `,"strict":%t}`, e.target == OpenAIStrict)
	})
}

func (openAIResponses) parseCall(raw json.RawMessage) (Call, error) {
	var m struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Call{}, fmt.Errorf("openai-responses tool call: %w", err)
	}
	if m.Type != "" && m.Type != "function_call" {
		return Call{}, fmt.Errorf("openai-responses tool call: type %q, want function_call", m.Type)
	}
	return Call{ID: m.CallID, Name: m.Name, Arguments: json.RawMessage(m.Arguments)}, nil
}

func (openAIResponses) writeResult(b *bytes.Buffer, r Result) {
	b.WriteString(`{"type":"function_call_output",`)
	writeField(b, "call_id", r.Call.ID)
	b.WriteByte(',')
	writeField(b, "output", r.Text)
	b.WriteByte('}')
}

// anthropicMessages is FormatAnthropic.
type anthropicMessages struct{}

func (anthropicMessages) format() Format { return FormatAnthropic }

func (anthropicMessages) schemas(o Options) schemaPlan {
	return schemaPlan{primary: Anthropic, adapt: o.Adapt}
}

func (anthropicMessages) writeTools(b *bytes.Buffer, tools []entry) error {
	return writeArray(b, tools, func(e entry, schema []byte) {
		b.WriteByte('{')
		writeNameDescription(b, e)
		b.WriteByte(',')
		writeKey(b, "input_schema")
		b.Write(schema)
		b.WriteByte('}')
	})
}

func (anthropicMessages) parseCall(raw json.RawMessage) (Call, error) {
	var m struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Call{}, fmt.Errorf("anthropic tool_use: %w", err)
	}
	if m.Type != "" && m.Type != "tool_use" {
		return Call{}, fmt.Errorf("anthropic tool_use: type %q, want tool_use", m.Type)
	}
	return Call{ID: m.ID, Name: m.Name, Arguments: m.Input}, nil
}

func (anthropicMessages) writeResult(b *bytes.Buffer, r Result) {
	b.WriteString(`{"type":"tool_result",`)
	writeField(b, "tool_use_id", r.Call.ID)
	b.WriteByte(',')
	writeField(b, "content", r.Text)
	if r.Err != nil {
		b.WriteString(`,"is_error":true`)
	}
	b.WriteByte('}')
}

// geminiContent is FormatGemini.
type geminiContent struct{}

func (geminiContent) format() Format { return FormatGemini }

// schemas: GeminiParameters adapts for the OpenAPI-subset "parameters" field and falls
// back to an adapted "parametersJsonSchema".
func (geminiContent) schemas(o Options) schemaPlan {
	if o.GeminiParameters {
		return schemaPlan{primary: GeminiParameters, adapt: true, fallback: Gemini, fallbackNote: "parametersJsonSchema"}
	}
	return schemaPlan{primary: Gemini, adapt: o.Adapt}
}

// writeTools puts every function in one Tool's functionDeclarations; no tools is [].
func (geminiContent) writeTools(b *bytes.Buffer, tools []entry) error {
	if len(tools) == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteString(`[{"functionDeclarations":`)
	err := writeArray(b, tools, func(e entry, schema []byte) {
		b.WriteByte('{')
		writeNameDescription(b, e)
		if e.schema != nil {
			b.WriteByte(',')
			if e.target == GeminiParameters {
				writeKey(b, "parameters")
			} else {
				writeKey(b, "parametersJsonSchema")
			}
			b.Write(schema)
		}
		b.WriteByte('}')
	})
	b.WriteString("}]")
	return err
}

func (geminiContent) parseCall(raw json.RawMessage) (Call, error) {
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
		return Call{}, fmt.Errorf("gemini functionCall: %w", err)
	}
	f := m.fc
	if m.FunctionCall != nil {
		f = *m.FunctionCall
	}
	return Call{ID: f.ID, Name: f.Name, Arguments: f.Args}, nil
}

func (geminiContent) writeResult(b *bytes.Buffer, r Result) {
	b.WriteString(`{"functionResponse":{`)
	if r.Call.ID != "" {
		writeField(b, "id", r.Call.ID)
		b.WriteByte(',')
	}
	writeField(b, "name", r.Call.Name)
	b.WriteString(`,"response":{`)
	if r.Err != nil {
		writeField(b, "error", r.Text)
	} else {
		writeField(b, "output", r.Text)
	}
	b.WriteString("}}}")
}

// writeArray writes tools as a JSON array, each by writeTool with its schema bytes. A
// schema that is not valid JSON is an error naming the tool.
func writeArray(b *bytes.Buffer, tools []entry, writeTool func(e entry, schema []byte)) error {
	b.WriteByte('[')
	for i, e := range tools {
		if i > 0 {
			b.WriteByte(',')
		}
		schema := bytes.TrimSpace(e.schema)
		if e.schema != nil && !json.Valid(schema) {
			return fmt.Errorf("tool %q: parameters are not valid JSON", e.tool.Name)
		}
		writeTool(e, schema)
	}
	b.WriteByte(']')
	return nil
}

// writeNameDescription writes "name" and, when there is one, "description".
func writeNameDescription(b *bytes.Buffer, e entry) {
	writeField(b, "name", e.tool.Name)
	if e.tool.Description != "" {
		b.WriteByte(',')
		writeField(b, "description", e.tool.Description)
	}
}

// writeKey writes a JSON object key and its colon.
func writeKey(b *bytes.Buffer, k string) {
	encodeString(b, k)
	b.WriteByte(':')
}

// writeField writes a JSON object member with a string value.
func writeField(b *bytes.Buffer, k, v string) {
	writeKey(b, k)
	encodeString(b, v)
}
