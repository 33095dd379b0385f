package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// This file is deferred loading's per-API shape, after each vendor's documentation:
//   - OpenAI Responses: deferred functions go into one {"type":"namespace"} per server with
//     "defer_loading": true, and {"type":"tool_search"} is added — hosted, or with
//     "execution":"client", whose tool_search_call items the Toolset answers with a
//     tool_search_output item carrying the loaded definitions.
//   - Anthropic Messages: deferred tools carry "defer_loading": true, and a tool search tool
//     is added — Anthropic's tool_search_tool_bm25_20251119 or _regex_20251119, or a
//     search_tools tool whose tool_result holds tool_reference blocks naming the matches.
//   - Chat Completions and Gemini have no deferral: deferred tools are left out, and a
//     search_tools function returns the matches' definitions as text; a Conversation adds
//     them to the next request's tools.

// marshalDeferred writes the request's "tools" with deferred loading. upfront leaves out
// what the model does not read before it searches (Anthropic's deferred tools, the functions
// inside OpenAI namespaces), for measuring; extra are deferred entries a Conversation loaded.
func (ts *Toolset) marshalDeferred(upfront bool, extra []bool) ([]byte, error) {
	df := ts.deferral
	var b bytes.Buffer
	var items [][]byte // the array's elements
	add := func(e entry, deferLoading bool) error {
		obj, err := ts.entryJSON(e)
		if err != nil {
			return err
		}
		if deferLoading {
			obj = withMember(obj, `"defer_loading":true`)
		}
		items = append(items, obj)
		return nil
	}
	format := ts.Format()
	switch format {
	case FormatOpenAIResponses:
		for i, e := range ts.tools {
			if !df.deferred[i] {
				if err := add(e, false); err != nil {
					return nil, err
				}
			}
		}
		for _, ns := range df.spaces {
			if ns.server == "" { // tools without a server: deferred functions of their own
				for _, i := range ns.entries {
					if upfront {
						items = append(items, nameOnly(`{"type":"function",`, ts.tools[i]))
					} else if err := add(ts.tools[i], true); err != nil {
						return nil, err
					}
				}
				continue
			}
			var o bytes.Buffer
			o.WriteString(`{"type":"namespace",`)
			writeMember(&o, "name", ns.name)
			o.WriteByte(',')
			writeMember(&o, "description", ns.description)
			if !upfront {
				o.WriteString(`,"tools":[`)
				for k, i := range ns.entries {
					if k > 0 {
						o.WriteByte(',')
					}
					obj, err := ts.entryJSON(ts.tools[i])
					if err != nil {
						return nil, err
					}
					o.Write(withMember(obj, `"defer_loading":true`))
				}
				o.WriteByte(']')
			}
			o.WriteByte('}')
			items = append(items, o.Bytes())
		}
		items = append(items, df.searchToolJSON(format))
	case FormatAnthropic:
		for i, e := range ts.tools {
			if df.deferred[i] && upfront {
				continue
			}
			if err := add(e, df.deferred[i]); err != nil {
				return nil, err
			}
		}
		items = append(items, df.searchToolJSON(format))
	default: // Chat Completions, Gemini: only what is loaded, and the search function
		var loaded []entry
		for i, e := range ts.tools {
			if !df.deferred[i] || i < len(extra) && extra[i] {
				loaded = append(loaded, e)
			}
		}
		var arr bytes.Buffer
		if err := ts.api.writeTools(&arr, loaded); err != nil {
			return nil, err
		}
		return spliceLast(arr.Bytes(), format, df.searchToolJSON(format)), nil
	}
	b.WriteByte('[')
	b.Write(bytes.Join(items, []byte(",")))
	b.WriteByte(']')
	return b.Bytes(), nil
}

// entryJSON is one entry as the format's tools array holds it (not Gemini's).
func (ts *Toolset) entryJSON(e entry) ([]byte, error) {
	var arr bytes.Buffer
	if err := ts.api.writeTools(&arr, []entry{e}); err != nil {
		return nil, err
	}
	out := bytes.TrimSpace(arr.Bytes())
	return out[1 : len(out)-1], nil // [ {...} ]
}

// withMember adds a member to the end of a JSON object.
func withMember(obj []byte, member string) []byte {
	out := bytes.TrimSuffix(bytes.TrimSpace(obj), []byte("}"))
	out = append(slicesClone(out), ',')
	out = append(out, member...)
	return append(out, '}')
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// nameOnly is a function as the model sees it before loading it: prefix, name, description.
func nameOnly(prefix string, e entry) []byte {
	var o bytes.Buffer
	o.WriteString(prefix)
	writeMember(&o, "name", e.tool.Name)
	o.WriteByte(',')
	writeMember(&o, "description", e.tool.Description)
	o.WriteByte('}')
	return o.Bytes()
}

// spliceLast adds one function to a Chat Completions or Gemini tools array.
func spliceLast(arr []byte, format Format, fn []byte) []byte {
	arr = bytes.TrimSpace(arr)
	var out []byte
	if format == FormatGemini {
		if string(arr) == "[]" {
			out = append([]byte(`[{"functionDeclarations":[`), fn...)
			return append(out, "]}]"...)
		}
		out = append(slicesClone(arr[:len(arr)-3]), ',') // ...]}]
		out = append(out, fn...)
		return append(out, "]}]"...)
	}
	out = slicesClone(arr[:len(arr)-1])
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, fn...)
	return append(out, ']')
}

// searchToolJSON is the search tool in format's shape.
func (df *deferral) searchToolJSON(format Format) []byte {
	var o bytes.Buffer
	desc := df.searchDescription(format)
	switch format {
	case FormatOpenAIResponses:
		if df.opts.Search == SearchHosted {
			return []byte(`{"type":"tool_search"}`)
		}
		o.WriteString(`{"type":"tool_search","execution":"client",`)
		writeMember(&o, "description", desc)
		o.WriteString(`,"parameters":` + openAISearchSchema + `}`)
	case FormatAnthropic:
		switch df.opts.Search {
		case SearchHosted:
			return []byte(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`)
		case SearchRegex:
			return []byte(`{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}`)
		}
		o.WriteByte('{')
		writeMember(&o, "name", df.search)
		o.WriteByte(',')
		writeMember(&o, "description", desc)
		o.WriteString(`,"input_schema":` + searchSchema + `}`)
	case FormatGemini:
		o.WriteByte('{')
		writeMember(&o, "name", df.search)
		o.WriteByte(',')
		writeMember(&o, "description", desc)
		field := "parametersJsonSchema"
		if df.geminiParameters {
			field = "parameters"
		}
		o.WriteString(`,"` + field + `":` + searchSchema + `}`)
	default:
		o.WriteString(`{"type":"function","function":{`)
		writeMember(&o, "name", df.search)
		o.WriteByte(',')
		writeMember(&o, "description", desc)
		o.WriteString(`,"parameters":` + searchSchema + `}}`)
	}
	return o.Bytes()
}

func writeMember(b *bytes.Buffer, k, v string) {
	encodeString(b, k)
	b.WriteByte(':')
	encodeString(b, v)
}

// parseSearchCall reads an OpenAI Responses tool_search_call item; ok is false for
// anything else (other formats' search calls are ordinary tool calls).
func (ts *Toolset) parseSearchCall(raw json.RawMessage) (c Call, ok bool, err error) {
	if ts.Format() != FormatOpenAIResponses {
		return Call{}, false, nil
	}
	var m struct {
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Execution string          `json:"execution"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Type != "tool_search_call" {
		return Call{}, false, nil
	}
	if m.Execution == "server" || ts.deferral.search == "" {
		return Call{}, true, errors.New("openai-responses tool_search_call: executed by the server; nothing to answer")
	}
	return Call{ID: m.CallID, Name: ts.deferral.search, Arguments: m.Arguments}, true, nil
}

// runSearch answers a client search call: the deferred tools it loads go in Result.Loaded.
func (ts *Toolset) runSearch(c Call) Result {
	a, err := parseSearchArgs(c.Arguments)
	if err != nil {
		return Result{Call: c, Text: "error: " + err.Error(), Err: fmt.Errorf("%w", err)}
	}
	found := ts.deferral.find(a)
	r := Result{Call: c, Text: foundText(ts.tools, found)}
	for _, i := range found {
		r.Loaded = append(r.Loaded, ts.tools[i].tool.Name)
	}
	return r
}

// searchResultMessage writes a search result where the format has its own shape (OpenAI
// Responses' tool_search_output, Anthropic's tool_reference blocks); nil: the ordinary
// result message carries Result.Text.
func (ts *Toolset) searchResultMessage(r Result) json.RawMessage {
	df := ts.deferral
	found := make([]int, 0, len(r.Loaded))
	for _, n := range r.Loaded {
		if i, ok := df.entryOf[n]; ok {
			found = append(found, i)
		}
	}
	var o bytes.Buffer
	switch ts.Format() {
	case FormatOpenAIResponses:
		o.WriteString(`{"type":"tool_search_output",`)
		writeMember(&o, "call_id", r.Call.ID)
		o.WriteString(`,"execution":"client","status":"completed","tools":[`)
		first := true
		comma := func() {
			if !first {
				o.WriteByte(',')
			}
			first = false
		}
		for _, ns := range df.spaces {
			var mine []int
			for _, i := range found {
				if slicesContains(ns.entries, i) {
					mine = append(mine, i)
				}
			}
			if len(mine) == 0 {
				continue
			}
			if ns.server == "" {
				for _, i := range mine {
					obj, err := ts.entryJSON(ts.tools[i])
					if err == nil {
						comma()
						o.Write(obj)
					}
				}
				continue
			}
			comma()
			o.WriteString(`{"type":"namespace",`)
			writeMember(&o, "name", ns.name)
			o.WriteByte(',')
			writeMember(&o, "description", ns.description)
			o.WriteString(`,"tools":[`)
			n := 0
			for _, i := range mine {
				obj, err := ts.entryJSON(ts.tools[i])
				if err != nil {
					continue
				}
				if n > 0 {
					o.WriteByte(',')
				}
				o.Write(obj)
				n++
			}
			o.WriteString("]}")
		}
		o.WriteString("]}")
		return o.Bytes()
	case FormatAnthropic:
		if r.Err != nil || len(found) == 0 {
			return nil
		}
		o.WriteString(`{"type":"tool_result",`)
		writeMember(&o, "tool_use_id", r.Call.ID)
		o.WriteString(`,"content":[`)
		for k, i := range found {
			if k > 0 {
				o.WriteByte(',')
			}
			o.WriteString(`{"type":"tool_reference",`)
			writeMember(&o, "tool_name", ts.tools[i].tool.Name)
			o.WriteByte('}')
		}
		o.WriteString("]}")
		return o.Bytes()
	}
	return nil
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Conversation is one conversation's view of a deferred Toolset: Chat Completions and
// Gemini have no deferral of their own, so the tools the model loads by searching must be
// sent with every later request; a Conversation remembers them. For OpenAI Responses and
// Anthropic the API keeps track (through the tool_search_output and tool_reference items in
// the history) and a Conversation's tools are the Toolset's. Safe for concurrent use.
type Conversation struct {
	ts     *Toolset
	mu     sync.Mutex
	loaded []bool // per entry: loaded by a search in this conversation
}

// Conversation starts a conversation over ts.
func (ts *Toolset) Conversation() *Conversation {
	return &Conversation{ts: ts, loaded: make([]bool, len(ts.tools))}
}

// MarshalJSON gives the tools for the conversation's next request: the Toolset's, plus (for
// Chat Completions and Gemini) every deferred tool a search loaded so far.
func (c *Conversation) MarshalJSON() ([]byte, error) {
	if c.ts.deferral == nil {
		return c.ts.MarshalJSON()
	}
	c.mu.Lock()
	extra := append([]bool(nil), c.loaded...)
	c.mu.Unlock()
	return c.ts.marshalDeferred(false, extra)
}

// Handle is Toolset.Handle that also remembers what a search loaded.
func (c *Conversation) Handle(ctx context.Context, call json.RawMessage) (json.RawMessage, error) {
	parsed, err := c.ts.ParseCall(call)
	if err != nil {
		return nil, err
	}
	return c.ts.ResultMessage(c.Run(ctx, parsed)), nil
}

// Run is Toolset.Run that also remembers what a search loaded.
func (c *Conversation) Run(ctx context.Context, call Call) Result {
	r := c.ts.Run(ctx, call)
	c.Load(r.Loaded...)
	return r
}

// Load marks deferred tools loaded by name, as a search would (to restore a stored
// conversation). Unknown names are ignored.
func (c *Conversation) Load(names ...string) {
	if c.ts.deferral == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		if i, ok := c.ts.deferral.entryOf[n]; ok && c.ts.deferral.deferred[i] {
			c.loaded[i] = true
		}
	}
}

// Loaded lists the deferred tools the conversation's searches loaded, in toolset order.
func (c *Conversation) Loaded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for i, l := range c.loaded {
		if l {
			out = append(out, c.ts.tools[i].tool.Name)
		}
	}
	return out
}

// Upfront is what the model reads of the tools before it searches, per each vendor's
// documentation, for measuring what deferral saves: without Options.Defer the whole tools
// array; with it, Chat Completions and Gemini read the array (loaded tools and the search
// function), Anthropic leaves deferred tools out of the prompt, and OpenAI Responses shows
// a namespace's name and description only (and a deferred function's name and
// description). It is not a request body: send MarshalJSON.
func (ts *Toolset) Upfront() ([]byte, error) {
	if ts.deferral == nil {
		return ts.MarshalJSON()
	}
	return ts.marshalDeferred(true, nil)
}
