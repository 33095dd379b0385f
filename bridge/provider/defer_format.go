package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ttalk/mcpbridge/bridge"
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

// marshalDeferred writes the request's "tools" with deferred loading (see api.writeDeferred).
func (ts *Toolset) marshalDeferred(upfront bool, loaded []bool) ([]byte, error) {
	return ts.api.writeDeferred(ts, upfront, loaded)
}

// parseSearchCall reads a search call that is not an ordinary tool call.
func (ts *Toolset) parseSearchCall(raw json.RawMessage) (Call, bool, error) {
	return ts.api.parseSearch(ts.deferral, raw)
}

// searchResultMessage writes a search result in the API's own shape, or nil.
func (ts *Toolset) searchResultMessage(r Result) json.RawMessage {
	return ts.api.writeSearchResult(ts, r)
}

// runSearch answers a client search call: the deferred tools it loads go in Result.Loaded.
func (ts *Toolset) runSearch(c Call) Result {
	a, err := parseSearchArgs(c.Arguments)
	if err != nil {
		err = fmt.Errorf("%w: %w", bridge.ErrInvalidArguments, err)
		return Result{Call: c, Text: "error: " + err.Error(), Err: err}
	}
	found := ts.deferral.find(a)
	r := Result{Call: c, Text: foundText(ts.tools, found)}
	for _, i := range found {
		r.Loaded = append(r.Loaded, ts.tools[i].tool.Name)
	}
	return r
}

// OpenAI Chat Completions: no deferral of its own.

func (openAIChat) searches(m SearchMode) bool { return m == SearchClient }

func (a openAIChat) writeDeferred(ts *Toolset, _ bool, loaded []bool) ([]byte, error) {
	return writeLoadedAndSearch(a, ts, loaded, func(arr, fn []byte) []byte { return appendToArray(arr, fn) })
}

func (openAIChat) searchTool(df *deferral) []byte {
	var o bytes.Buffer
	o.WriteString(`{"type":"function","function":{`)
	writeMember(&o, "name", df.search)
	o.WriteByte(',')
	writeMember(&o, "description", df.searchDescription(false))
	o.WriteString(`,"parameters":` + searchSchema + `}}`)
	return o.Bytes()
}

func (openAIChat) parseSearch(*deferral, json.RawMessage) (Call, bool, error) {
	return Call{}, false, nil
}

func (openAIChat) writeSearchResult(*Toolset, Result) json.RawMessage { return nil }

// Gemini: no deferral of its own.

func (geminiContent) searches(m SearchMode) bool { return m == SearchClient }

func (a geminiContent) writeDeferred(ts *Toolset, _ bool, loaded []bool) ([]byte, error) {
	return writeLoadedAndSearch(a, ts, loaded, func(arr, fn []byte) []byte {
		if string(arr) == "[]" { // no tool loaded: one Tool with the search function
			return append(append([]byte(`[{"functionDeclarations":[`), fn...), "]}]"...)
		}
		out := append(slicesClone(arr[:len(arr)-3]), ',') // [{"functionDeclarations":[…]}]
		return append(append(out, fn...), "]}]"...)
	})
}

func (geminiContent) searchTool(df *deferral) []byte {
	var o bytes.Buffer
	o.WriteByte('{')
	writeMember(&o, "name", df.search)
	o.WriteByte(',')
	writeMember(&o, "description", df.searchDescription(false))
	field := "parametersJsonSchema"
	if df.geminiParameters {
		field = "parameters"
	}
	o.WriteString(`,"` + field + `":` + searchSchema + `}`)
	return o.Bytes()
}

func (geminiContent) parseSearch(*deferral, json.RawMessage) (Call, bool, error) {
	return Call{}, false, nil
}

func (geminiContent) writeSearchResult(*Toolset, Result) json.RawMessage { return nil }

// writeLoadedAndSearch writes the loaded entries (not deferred, or loaded by a
// Conversation) in a's envelope and adds the search function with add.
func writeLoadedAndSearch(a api, ts *Toolset, loaded []bool, add func(arr, fn []byte) []byte) ([]byte, error) {
	var send []entry
	for i, e := range ts.tools {
		if !ts.deferral.deferred[i] || i < len(loaded) && loaded[i] {
			send = append(send, e)
		}
	}
	var arr bytes.Buffer
	if err := a.writeTools(&arr, send); err != nil {
		return nil, err
	}
	return add(bytes.TrimSpace(arr.Bytes()), a.searchTool(ts.deferral)), nil
}

// appendToArray adds one element to a JSON array.
func appendToArray(arr, elem []byte) []byte {
	out := slicesClone(arr[:len(arr)-1])
	if len(out) > 1 {
		out = append(out, ',')
	}
	return append(append(out, elem...), ']')
}

// OpenAI Responses: namespaces with deferred functions, and tool_search.

func (openAIResponses) searches(m SearchMode) bool { return m == SearchClient || m == SearchHosted }

func (a openAIResponses) writeDeferred(ts *Toolset, upfront bool, _ []bool) ([]byte, error) {
	df := ts.deferral
	var items [][]byte
	for i, e := range ts.tools {
		if !df.deferred[i] {
			obj, err := entryJSON(a, e)
			if err != nil {
				return nil, err
			}
			items = append(items, obj)
		}
	}
	for _, ns := range df.spaces {
		if ns.server == "" { // tools without a server: deferred functions of their own
			for _, i := range ns.entries {
				if upfront { // the model reads a deferred function's name and description
					items = append(items, nameOnly(`{"type":"function",`, ts.tools[i]))
					continue
				}
				obj, err := entryJSON(a, ts.tools[i])
				if err != nil {
					return nil, err
				}
				items = append(items, withMember(obj, `"defer_loading":true`))
			}
			continue
		}
		var funcs [][]byte
		if !upfront { // the model reads a namespace's name and description only
			for _, i := range ns.entries {
				obj, err := entryJSON(a, ts.tools[i])
				if err != nil {
					return nil, err
				}
				funcs = append(funcs, withMember(obj, `"defer_loading":true`))
			}
		}
		items = append(items, namespaceJSON(ns, funcs, !upfront))
	}
	items = append(items, a.searchTool(df))
	return joinArray(items), nil
}

func (openAIResponses) searchTool(df *deferral) []byte {
	if df.opts.Search == SearchHosted {
		return []byte(`{"type":"tool_search"}`)
	}
	var o bytes.Buffer
	o.WriteString(`{"type":"tool_search","execution":"client",`)
	writeMember(&o, "description", df.searchDescription(true))
	o.WriteString(`,"parameters":` + openAISearchSchema + `}`)
	return o.Bytes()
}

// parseSearch reads a tool_search_call item. A server-executed one has nothing to answer.
func (openAIResponses) parseSearch(df *deferral, raw json.RawMessage) (Call, bool, error) {
	var m struct {
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Execution string          `json:"execution"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Type != "tool_search_call" {
		return Call{}, false, nil
	}
	if m.Execution == "server" || df.search == "" {
		return Call{}, true, errors.New("openai-responses tool_search_call: executed by the server; nothing to answer")
	}
	return Call{ID: m.CallID, Name: df.search, Arguments: m.Arguments}, true, nil
}

// writeSearchResult is a tool_search_output item: the found functions, in their servers'
// namespaces.
func (a openAIResponses) writeSearchResult(ts *Toolset, r Result) json.RawMessage {
	df := ts.deferral
	found := df.entries(r.Loaded)
	var items [][]byte
	for _, ns := range df.spaces {
		var funcs [][]byte
		for _, i := range found {
			if !slices.Contains(ns.entries, i) {
				continue
			}
			if obj, err := entryJSON(a, ts.tools[i]); err == nil {
				funcs = append(funcs, obj)
			}
		}
		switch {
		case len(funcs) == 0:
		case ns.server == "":
			items = append(items, funcs...)
		default:
			items = append(items, namespaceJSON(ns, funcs, true))
		}
	}
	var o bytes.Buffer
	o.WriteString(`{"type":"tool_search_output",`)
	writeMember(&o, "call_id", r.Call.ID)
	o.WriteString(`,"execution":"client","status":"completed","tools":`)
	o.Write(joinArray(items))
	o.WriteByte('}')
	return o.Bytes()
}

// namespaceJSON is a {"type":"namespace"} tool, with funcs when withTools.
func namespaceJSON(ns namespace, funcs [][]byte, withTools bool) []byte {
	var o bytes.Buffer
	o.WriteString(`{"type":"namespace",`)
	writeMember(&o, "name", ns.name)
	o.WriteByte(',')
	writeMember(&o, "description", ns.description)
	if withTools {
		o.WriteString(`,"tools":`)
		o.Write(joinArray(funcs))
	}
	o.WriteByte('}')
	return o.Bytes()
}

// Anthropic: defer_loading, and a tool search tool.

func (anthropicMessages) searches(SearchMode) bool { return true }

func (a anthropicMessages) writeDeferred(ts *Toolset, upfront bool, _ []bool) ([]byte, error) {
	df := ts.deferral
	var items [][]byte
	for i, e := range ts.tools {
		if df.deferred[i] && upfront { // deferred tools are not in the prompt
			continue
		}
		obj, err := entryJSON(a, e)
		if err != nil {
			return nil, err
		}
		if df.deferred[i] {
			obj = withMember(obj, `"defer_loading":true`)
		}
		items = append(items, obj)
	}
	items = append(items, a.searchTool(df))
	return joinArray(items), nil
}

func (anthropicMessages) searchTool(df *deferral) []byte {
	switch df.opts.Search {
	case SearchHosted:
		return []byte(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`)
	case SearchRegex:
		return []byte(`{"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"}`)
	}
	var o bytes.Buffer
	o.WriteByte('{')
	writeMember(&o, "name", df.search)
	o.WriteByte(',')
	writeMember(&o, "description", df.searchDescription(false))
	o.WriteString(`,"input_schema":` + searchSchema + `}`)
	return o.Bytes()
}

func (anthropicMessages) parseSearch(*deferral, json.RawMessage) (Call, bool, error) {
	return Call{}, false, nil // search_tools arrives as an ordinary tool_use
}

// writeSearchResult is a tool_result whose content is one tool_reference block per found
// tool; without any, the ordinary text result says so.
func (anthropicMessages) writeSearchResult(ts *Toolset, r Result) json.RawMessage {
	found := ts.deferral.entries(r.Loaded)
	if r.Err != nil || len(found) == 0 {
		return nil
	}
	refs := make([][]byte, len(found))
	for k, i := range found {
		var o bytes.Buffer
		o.WriteString(`{"type":"tool_reference",`)
		writeMember(&o, "tool_name", ts.tools[i].tool.Name)
		o.WriteByte('}')
		refs[k] = o.Bytes()
	}
	var o bytes.Buffer
	o.WriteString(`{"type":"tool_result",`)
	writeMember(&o, "tool_use_id", r.Call.ID)
	o.WriteString(`,"content":`)
	o.Write(joinArray(refs))
	o.WriteByte('}')
	return o.Bytes()
}

// entryJSON is one entry as a's tools array holds it (one element; not Gemini's).
func entryJSON(a api, e entry) ([]byte, error) {
	var arr bytes.Buffer
	if err := a.writeTools(&arr, []entry{e}); err != nil {
		return nil, err
	}
	out := bytes.TrimSpace(arr.Bytes())
	return out[1 : len(out)-1], nil // [ {...} ]
}

// withMember adds a member to the end of a JSON object.
func withMember(obj []byte, member string) []byte {
	out := slicesClone(bytes.TrimSuffix(bytes.TrimSpace(obj), []byte("}")))
	out = append(out, ',')
	out = append(out, member...)
	return append(out, '}')
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// joinArray writes items as a JSON array.
func joinArray(items [][]byte) []byte {
	out := []byte{'['}
	out = append(out, bytes.Join(items, []byte(","))...)
	return append(out, ']')
}

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

func writeMember(b *bytes.Buffer, k, v string) {
	encodeString(b, k)
	b.WriteByte(':')
	encodeString(b, v)
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
