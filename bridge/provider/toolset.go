package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ttalk/mcpbridge/bridge"
)

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
	// Defer keeps tools out of the upfront list; the model finds them by searching (see
	// Deferral). Nil sends every tool.
	Defer *Deferral
}

// Toolset is a list of bridge tools in one model API's shape, and the way back: the model's
// tool calls in, Handler calls, tool results out. Safe for concurrent use once built.
type Toolset struct {
	api      api
	tools    []entry
	byName   map[string]int
	deferral *deferral // nil unless Options.Defer
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
	a, ok := apiFor(format)
	if !ok {
		return nil, unknownFormat(string(format))
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	plan := a.schemas(o)
	ts := &Toolset{api: a, byName: make(map[string]int, len(tools))}
	for _, t := range tools {
		if _, dup := ts.byName[t.Name]; dup {
			return nil, fmt.Errorf("two tools named %q", t.Name)
		}
		e, err := newEntry(t, plan)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		ts.byName[t.Name] = len(ts.tools)
		ts.tools = append(ts.tools, e)
	}
	if o.Defer != nil {
		df, err := newDeferral(a, *o.Defer, ts.tools)
		if err != nil {
			return nil, err
		}
		df.geminiParameters = o.GeminiParameters
		ts.deferral = df
	}
	return ts, nil
}

// newEntry decides what is sent for t under plan: the server's schema, or one adapted for
// plan.primary, or, when that still has findings, one adapted for plan.fallback.
func newEntry(t bridge.Tool, plan schemaPlan) (entry, error) {
	e := entry{tool: t}
	primary, fallback := plan.primary, plan.fallback
	if !plan.adapt {
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
		e.report = Report{Tool: t.Name, Target: fallback, Changes: fb.Changes, Remaining: append(slices.Clone(remaining), fb.Remaining...), Fallback: plan.fallbackNote}
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
func (ts *Toolset) Format() Format { return ts.api.format() }

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
	if ts.deferral != nil {
		return ts.marshalDeferred(false, nil)
	}
	var b bytes.Buffer
	if err := ts.api.writeTools(&b, ts.tools); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
