package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// SearchMode says who searches the deferred tools of a Toolset.
type SearchMode string

// The search modes.
const (
	// SearchClient (the default) has the bridge's index (package toolsearch) answer the
	// model's searches: a client-executed tool_search on OpenAI Responses, a search_tools
	// tool answered with tool_reference blocks on Anthropic, a search_tools function on Chat
	// Completions and Gemini.
	SearchClient SearchMode = "client"
	// SearchHosted has the API search: OpenAI Responses' hosted tool_search, Anthropic's
	// BM25 tool search tool. Chat Completions and Gemini have none (New fails).
	SearchHosted SearchMode = "hosted"
	// SearchRegex is Anthropic's regex tool search tool (Anthropic only).
	SearchRegex SearchMode = "regex"
)

// Deferral keeps tools out of the upfront tool list; the model finds and loads them by
// searching. Which tools are deferred, in order of precedence:
//  1. a tool whose name matches a Load glob is sent;
//  2. one matching a Defer glob is deferred;
//  3. one whose server says (ServerConfig.Defer, servers.yaml "defer: true|false") follows
//     it;
//  4. the rest are deferred when the toolset is over MaxTools tools or MaxTokens tokens of
//     definitions — always when both are 0 — and sent otherwise.
type Deferral struct {
	// Search is who searches: SearchClient (default), SearchHosted or SearchRegex.
	Search SearchMode
	// Load and Defer are path.Match globs on model-visible tool names.
	Load, Defer []string
	// MaxTools and MaxTokens are the automatic threshold (0: no bound of that kind).
	MaxTools, MaxTokens int
	// Count counts tokens for MaxTokens (bridge/tokens' Counter.Count); nil: bytes/4.
	Count func(string) int
	// Results is the most tools one client-side search loads; 0 means 5, at most 20.
	Results int
}

const (
	defaultResults = 5
	maxResults     = 20
	// maxSearchQuery bounds the query text of one search call that is searched.
	maxSearchQuery = 1000
	// maxSearchPaths bounds the names one OpenAI search call may load by name.
	maxSearchPaths = 50
	// searchToolName is the client search tool of Chat Completions, Gemini and Anthropic;
	// OpenAI Responses' is its own tool_search.
	searchToolName = "search_tools"
	// maxNamespaceDescription bounds a namespace description (OpenAI Responses), the
	// server's part of the search tool's description, and the tool list in them.
	maxNamespaceDescription = 400
	maxNamespaceToolList    = 600
)

// deferral is a Toolset's deferred-loading state, fixed by New.
type deferral struct {
	opts     Deferral
	deferred []bool            // per entry
	index    *bridge.ToolIndex // over the deferred tools
	entryOf  map[string]int    // tool name → entry
	spaces   []namespace       // deferred tools by server, in toolset order
	nsOf     map[string]int    // namespace name → spaces index
	search   string            // the client search tool's name; "" for a hosted search
	// geminiParameters: the search function's schema goes in "parameters" (Gemini).
	geminiParameters bool
}

// namespace is one server's deferred tools (OpenAI Responses sends each as a namespace).
type namespace struct {
	name, description string
	server            string // the server ID; "" for tools without a server
	entries           []int
}

// newDeferral decides which entries are deferred and builds the index over them.
func newDeferral(a api, d Deferral, entries []entry) (*deferral, error) {
	if d.Search == "" {
		d.Search = SearchClient
	}
	switch {
	case d.Search != SearchClient && d.Search != SearchHosted && d.Search != SearchRegex:
		return nil, fmt.Errorf("unknown search mode %q (want client, hosted or regex)", d.Search)
	case !a.searches(d.Search):
		return nil, fmt.Errorf("%s has no %s tool search; use SearchClient", a.format(), d.Search)
	}
	if d.Results <= 0 {
		d.Results = defaultResults
	}
	d.Results = min(d.Results, maxResults)
	for _, g := range append(slices.Clone(d.Load), d.Defer...) {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("defer: bad glob %q: %w", g, err)
		}
	}
	df := &deferral{opts: d, deferred: make([]bool, len(entries)), entryOf: map[string]int{}, nsOf: map[string]int{}}
	if d.Search == SearchClient {
		df.search = searchToolName
		if a.format() == FormatOpenAIResponses {
			df.search = "tool_search" // the API's own tool, executed by the client
		}
	}
	over := overThreshold(d, entries)
	var tools bridge.Tools
	for i, e := range entries {
		df.entryOf[e.tool.Name] = i
		if !decideDefer(d, e.tool, over) {
			continue
		}
		df.deferred[i] = true
		tools = append(tools, e.tool)
		server := ""
		if e.tool.Server != nil {
			server = e.tool.Server.ID()
		}
		j := slices.IndexFunc(df.spaces, func(n namespace) bool { return n.server == server })
		if j < 0 {
			j = len(df.spaces)
			df.spaces = append(df.spaces, namespace{server: server})
		}
		df.spaces[j].entries = append(df.spaces[j].entries, i)
	}
	if df.search != "" {
		if _, clash := df.entryOf[df.search]; clash {
			return nil, fmt.Errorf("a tool is named %q, the name of the search tool", df.search)
		}
	}
	taken := map[string]bool{}
	for i := range df.spaces {
		ns := &df.spaces[i]
		ns.name = namespaceName(ns.server, taken)
		ns.description = namespaceDescription(ns, entries)
		df.nsOf[ns.name] = i
	}
	df.index = tools.Index()
	return df, nil
}

// decideDefer applies the precedence of Deferral to one tool.
func decideDefer(d Deferral, t bridge.Tool, over bool) bool {
	switch {
	case matchGlob(d.Load, t.Name):
		return false
	case matchGlob(d.Defer, t.Name):
		return true
	case t.Server != nil && t.Server.Config().Defer != nil:
		return *t.Server.Config().Defer
	}
	return over
}

func matchGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// overThreshold reports whether the toolset is past Deferral's automatic threshold.
func overThreshold(d Deferral, entries []entry) bool {
	if d.MaxTools == 0 && d.MaxTokens == 0 {
		return true
	}
	if d.MaxTools > 0 && len(entries) > d.MaxTools {
		return true
	}
	if d.MaxTokens > 0 {
		count := d.Count
		if count == nil {
			count = func(s string) int { return (len(s) + 3) / 4 }
		}
		n := 0
		for _, e := range entries {
			n += count(e.tool.Name) + count(e.tool.Description) + count(string(e.schema))
		}
		return n > d.MaxTokens
	}
	return false
}

// namespaceName makes a server ID a namespace name: the characters function names allow
// ([A-Za-z0-9_-]), at most 64 bytes, unique among taken.
func namespaceName(server string, taken map[string]bool) string {
	if server == "" {
		server = "tools"
	}
	var b strings.Builder
	for _, r := range server {
		if r == '_' || r == '-' || r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 60 {
		name = name[:60]
	}
	base := name
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	taken[name] = true
	return name
}

// namespaceDescription is what the model reads of a server before it searches: the first
// paragraph of its instructions (untrusted text, already cleaned by the bridge) or its name,
// then its tools' names, both bounded.
func namespaceDescription(ns *namespace, entries []entry) string {
	var head string
	if len(ns.entries) > 0 {
		if s := entries[ns.entries[0]].tool.Server; s != nil {
			st := s.Status()
			if para, _, _ := strings.Cut(strings.TrimSpace(st.Instructions), "\n\n"); para != "" {
				head = strings.Join(strings.Fields(para), " ")
			} else {
				head = fmt.Sprintf("Tools of the MCP server %q", s.ID())
				if st.ServerName != "" && st.ServerName != s.ID() {
					head += " (" + strings.Join(strings.Fields(st.ServerName+" "+st.ServerVersion), " ") + ")"
				}
				head += "."
			}
		}
	}
	if head == "" {
		head = "Tools."
	}
	head = redact.Clip(head, maxNamespaceDescription)
	names := make([]string, len(ns.entries))
	for i, j := range ns.entries {
		names[i] = entries[j].tool.Name
	}
	return fmt.Sprintf("%s %d tools: %s", head, len(names), redact.Clip(strings.Join(names, ", "), maxNamespaceToolList))
}

// searchArgs are the arguments of a search call: a query (every client search) and, from
// OpenAI's default tool_search schema, paths: namespaces or tools to load by name.
type searchArgs struct {
	Query string
	Paths []string
	Limit int
}

// parseSearchArgs reads a model's search arguments: a JSON object, or a JSON string
// holding one (Chat Completions sends arguments as text). Unknown members are ignored; a
// query that is not a string, or paths that are not strings, are errors.
func parseSearchArgs(raw json.RawMessage) (searchArgs, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return searchArgs{}, fmt.Errorf("search arguments: %w", err)
		}
		raw = json.RawMessage(s)
	}
	var m struct {
		Query      *string  `json:"query"`
		Paths      []string `json:"paths"`
		Limit      *int     `json:"limit"`
		MaxResults *int     `json:"max_results"`
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return searchArgs{}, fmt.Errorf("search arguments: want an object with a query")
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return searchArgs{}, fmt.Errorf("search arguments: %w", err)
	}
	var a searchArgs
	if m.Query != nil {
		a.Query = *m.Query
		if len(a.Query) > maxSearchQuery {
			a.Query = a.Query[:maxSearchQuery]
		}
	}
	if len(m.Paths) > maxSearchPaths {
		m.Paths = m.Paths[:maxSearchPaths]
	}
	a.Paths = m.Paths
	for _, l := range []*int{m.Limit, m.MaxResults} {
		if l != nil && *l > 0 {
			a.Limit = *l
		}
	}
	if strings.TrimSpace(a.Query) == "" && len(a.Paths) == 0 {
		return a, fmt.Errorf("search arguments: want a non-empty query")
	}
	return a, nil
}

// find runs a search call: the entries of the deferred tools it loads, best first, no
// duplicates. Paths name namespaces (all their tools), tools, or "namespace.tool".
func (df *deferral) find(a searchArgs) []int {
	limit := df.opts.Results
	if a.Limit > 0 {
		limit = min(a.Limit, maxResults)
	}
	var out []int
	add := func(i int) {
		if df.deferred[i] && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	for _, p := range a.Paths {
		if j, ok := df.nsOf[p]; ok {
			for _, i := range df.spaces[j].entries {
				add(i)
			}
			continue
		}
		if _, tool, ok := strings.Cut(p, "."); ok {
			p = tool
		}
		if i, ok := df.entryOf[p]; ok {
			add(i)
		}
	}
	if strings.TrimSpace(a.Query) != "" {
		for _, r := range df.index.Search(a.Query, limit) {
			add(df.entryOf[r.Tool.Name])
		}
	}
	return out
}

// searchDescription is the client search tool's description: what it does and, per
// server, what can be found there (all the model knows of the deferred tools), unless the
// API shows namespaces of its own (OpenAI Responses).
func (df *deferral) searchDescription(namespaces bool) string {
	var b strings.Builder
	n := 0
	for _, ns := range df.spaces {
		n += len(ns.entries)
	}
	fmt.Fprintf(&b, "Find tools that are not loaded yet: %d more tools are available through this search. "+
		"Describe the task in a few words (\"create a GitHub issue\", \"list Kubernetes pods\"); the best matches "+
		"(up to %d) become callable right away, with their parameters. Search again with other words if none fits.", n, df.opts.Results)
	if len(df.spaces) > 0 && !namespaces {
		b.WriteString("\nServers:")
		for _, ns := range df.spaces {
			fmt.Fprintf(&b, "\n- %s: %s", ns.name, redact.Clip(ns.description, maxNamespaceDescription))
		}
	}
	return b.String()
}

// searchSchema is the client search tool's input schema.
const searchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words."}},"required":["query"]}`

// openAISearchSchema is OpenAI Responses' client tool_search schema: a query, or paths
// (namespace names, or namespace.tool) to load by name.
const openAISearchSchema = `{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words."},"paths":{"type":"array","items":{"type":"string"},"description":"Namespaces or namespace.tool names to load."}}}`

// foundText is what the model reads of a search result in formats that answer with text:
// the loaded tools' definitions, one JSON object a line.
func foundText(entries []entry, found []int) string {
	if len(found) == 0 {
		return "No tool matches. Search again with other words."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools loaded; call them directly:", len(found))
	for _, i := range found {
		e := entries[i]
		b.WriteString("\n{")
		var line bytes.Buffer
		encodeString(&line, "name")
		line.WriteByte(':')
		encodeString(&line, e.tool.Name)
		line.WriteByte(',')
		encodeString(&line, "description")
		line.WriteByte(':')
		encodeString(&line, e.tool.Description)
		if s := bytes.TrimSpace(e.schema); len(s) > 0 && json.Valid(s) {
			line.WriteByte(',')
			encodeString(&line, "parameters")
			line.WriteByte(':')
			line.Write(s)
		}
		b.Write(line.Bytes())
		b.WriteString("}")
	}
	return b.String()
}

// entries maps tool names to their entries, skipping unknown names.
func (df *deferral) entries(names []string) []int {
	out := make([]int, 0, len(names))
	for _, n := range names {
		if i, ok := df.entryOf[n]; ok {
			out = append(out, i)
		}
	}
	return out
}
