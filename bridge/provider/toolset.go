package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ttalk/mcpbridge/bridge"
)

// Format is a model API's request shape for tools.
type Format string

// The formats.
const (
	// FormatOpenAI is Chat Completions: [{"type":"function","function":{name, description,
	// parameters, strict}}].
	FormatOpenAI Format = "openai"
	// FormatOpenAIResponses is the Responses API: [{"type":"function", name, description,
	// parameters, strict}]. Responses defaults strict to true, so it is always sent.
	FormatOpenAIResponses Format = "openai-responses"
	// FormatAnthropic is the Messages API: [{name, description, input_schema}].
	FormatAnthropic Format = "anthropic"
	// FormatGemini is generateContent: [{"functionDeclarations":[{name, description,
	// parametersJsonSchema}]}] (or "parameters" with Options.GeminiParameters).
	FormatGemini Format = "gemini"
)

// Formats lists every format.
func Formats() []Format {
	return []Format{FormatOpenAI, FormatOpenAIResponses, FormatAnthropic, FormatGemini}
}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want openai, openai-responses, anthropic or gemini)", s)
}

// Options choose schema adaptation. The zero value sends every schema as the server sent it.
type Options struct {
	// Strict (OpenAI formats) adapts each schema to strict mode and sends "strict": true. A
	// tool whose schema cannot be made strict is sent with "strict": false and its schema
	// adapted for non-strict use; its Report says what stood in the way.
	Strict bool
	// Adapt rewrites schemas around what the target API rejects (see Adapt). Implied by
	// Strict and GeminiParameters.
	Adapt bool
	// GeminiParameters (Gemini format) sends the OpenAPI-subset "parameters" field instead
	// of "parametersJsonSchema". A tool whose schema cannot be expressed there is sent with
	// an adapted "parametersJsonSchema" instead; its Report says why.
	GeminiParameters bool
}

// Toolset is a list of bridge tools in one model API's shape, and the way back: the model's
// tool calls in, Handler calls, tool results out. Safe for concurrent use once built.
type Toolset struct {
	format Format
	tools  []entry
	byName map[string]int
}

type entry struct {
	tool    bridge.Tool
	target  Target          // the field the schema is sent in
	schema  json.RawMessage // what is sent; nil: no parameters field (Gemini, zero arguments)
	adapted *Adapted        // nil when sent as the server sent it
	report  Report
}

// Report is what happened to one tool's schema on the way to the model API.
type Report struct {
	Tool   string `json:"tool"`
	Target Target `json:"target"`
	// Adapted says the schema sent is not the server's bytes.
	Adapted bool     `json:"adapted"`
	Changes []string `json:"changes,omitempty"`
	// Remaining is what the API is still expected to reject. For a tool that could not be
	// made strict (or fit Gemini's "parameters"), it lists why, and Target says the
	// field actually used.
	Remaining []Finding `json:"remaining,omitempty"`
	// Fallback explains a tool sent differently from the Options: "strict: false", or
	// "parametersJsonSchema".
	Fallback string `json:"fallback,omitempty"`
}

// New converts tools to format. Tools keep their order; names must be unique (as
// bridge.Connect makes them).
func New(format Format, tools []bridge.Tool, opts *Options) (*Toolset, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	ts := &Toolset{format: format, byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if _, dup := ts.byName[t.Name]; dup {
			return nil, fmt.Errorf("two tools named %q", t.Name)
		}
		e, err := newEntry(format, t, o)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		ts.byName[t.Name] = len(ts.tools)
		ts.tools = append(ts.tools, e)
	}
	return ts, nil
}

func newEntry(format Format, t bridge.Tool, o Options) (entry, error) {
	e := entry{tool: t}
	var primary, fallback Target
	adapt := o.Adapt
	switch format {
	case FormatOpenAI, FormatOpenAIResponses:
		primary = OpenAI
		if o.Strict {
			primary, fallback, adapt = OpenAIStrict, OpenAI, true
		}
	case FormatAnthropic:
		primary = Anthropic
	case FormatGemini:
		primary = Gemini
		if o.GeminiParameters {
			primary, fallback, adapt = GeminiParameters, Gemini, true
		}
	}
	if !adapt {
		e.target, e.schema = primary, t.Parameters
		e.report = Report{Tool: t.Name, Target: primary, Remaining: Lint(t, primary)}
		return e, nil
	}
	a, err := Adapt(t.Parameters, primary)
	if err != nil {
		return e, err
	}
	remaining := a.Remaining
	if len(remaining) > 0 && fallback != "" {
		fb, err := Adapt(t.Parameters, fallback)
		if err != nil {
			return e, err
		}
		e.target, e.adapted = fallback, fb
		e.report = Report{Tool: t.Name, Target: fallback, Changes: fb.Changes, Remaining: append(slices.Clone(remaining), fb.Remaining...)}
		if fallback == OpenAI {
			e.report.Fallback = "strict: false"
		} else {
			e.report.Fallback = "parametersJsonSchema"
		}
	} else {
		e.target, e.adapted = primary, a
		e.report = Report{Tool: t.Name, Target: primary, Changes: a.Changes, Remaining: remaining}
	}
	e.schema = e.adapted.Schema
	e.report.Adapted = !bytes.Equal(bytes.TrimSpace(e.schema), bytes.TrimSpace(t.Parameters))
	if !validNameFor(t.Name, e.target) {
		e.report.Remaining = append([]Finding{{Target: e.target, Rule: RuleName, Count: 1, Detail: fmt.Sprintf("%q", t.Name)}}, e.report.Remaining...)
	}
	if e.target == GeminiParameters && emptyObjectSchema(e.schema) {
		e.schema = nil // a function without arguments: Gemini rejects an empty OBJECT
	}
	return e, nil
}

// withoutEmptyRoot drops the top-level "object without properties" finding: a Gemini
// function without arguments is sent without "parameters".
func withoutEmptyRoot(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Rule == RuleGeminiEmptyObject && f.Path == "" {
			if f.Count == 1 {
				continue
			}
			f.Count--
		}
		out = append(out, f)
	}
	return out
}

func emptyObjectSchema(schema json.RawMessage) bool {
	v, err := decode(schema)
	if err != nil {
		return false
	}
	o, ok := v.(*object)
	return ok && emptyObject(o)
}

// emptyObject reports whether a schema is an object type with no properties.
func emptyObject(o *object) bool {
	p := o.obj("properties")
	return typeSet(o)["object"] && (p == nil || p.len() == 0)
}

// Format is the format the toolset was built for.
func (ts *Toolset) Format() Format { return ts.format }

// Reports says, per tool in order, what was adapted and what the API may still reject.
func (ts *Toolset) Reports() []Report {
	out := make([]Report, len(ts.tools))
	for i, e := range ts.tools {
		out[i] = e.report
		out[i].Changes = slices.Clone(e.report.Changes)
		out[i].Remaining = slices.Clone(e.report.Remaining)
	}
	return out
}

// Len is the number of tools.
func (ts *Toolset) Len() int { return len(ts.tools) }

// MarshalJSON gives the request's "tools" value in the toolset's format: a JSON array.
func (ts *Toolset) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if ts.format == FormatGemini {
		if len(ts.tools) == 0 {
			return []byte("[]"), nil
		}
		b.WriteString(`[{"functionDeclarations":[`)
	} else {
		b.WriteByte('[')
	}
	for i, e := range ts.tools {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := e.writeTo(&b, ts.format); err != nil {
			return nil, fmt.Errorf("tool %q: %w", e.tool.Name, err)
		}
	}
	if ts.format == FormatGemini {
		b.WriteString("]}]")
	} else {
		b.WriteByte(']')
	}
	return b.Bytes(), nil
}

func (e entry) writeTo(b *bytes.Buffer, f Format) error {
	schema := bytes.TrimSpace(e.schema)
	if e.schema != nil && !json.Valid(schema) {
		return fmt.Errorf("parameters are not valid JSON")
	}
	field := func(k string) { encodeString(b, k); b.WriteByte(':') }
	nameDesc := func() {
		field("name")
		encodeString(b, e.tool.Name)
		if e.tool.Description != "" {
			b.WriteByte(',')
			field("description")
			encodeString(b, e.tool.Description)
		}
	}
	strict := e.target == OpenAIStrict
	switch f {
	case FormatOpenAI:
		b.WriteString(`{"type":"function","function":{`)
		nameDesc()
		b.WriteByte(',')
		field("parameters")
		b.Write(schema)
		fmt.Fprintf(b, `,"strict":%t}}`, strict)
	case FormatOpenAIResponses:
		b.WriteString(`{"type":"function",`)
		nameDesc()
		b.WriteByte(',')
		field("parameters")
		b.Write(schema)
		fmt.Fprintf(b, `,"strict":%t}`, strict)
	case FormatAnthropic:
		b.WriteByte('{')
		nameDesc()
		b.WriteByte(',')
		field("input_schema")
		b.Write(schema)
		b.WriteByte('}')
	case FormatGemini:
		b.WriteByte('{')
		nameDesc()
		if e.schema != nil {
			b.WriteByte(',')
			if e.target == GeminiParameters {
				field("parameters")
			} else {
				field("parametersJsonSchema")
			}
			b.Write(schema)
		}
		b.WriteByte('}')
	}
	return nil
}
