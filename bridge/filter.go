package bridge

import "github.com/ttalk/mcpbridge/internal/catalog"

// Filter returns the tools whose Name matches patterns, in order, for giving each agent its
// own subset of a Set's tools in one line:
//
//	researcher.Tools = set.Tools().Filter("search_*", "fetch", "!*delete*")
//
// Patterns follow the servers file's tool include/exclude globs (path.Match: "*", "?",
// "[a-z]"); a pattern starting with "!" excludes. A tool is kept when it matches some
// include pattern (or there are none) and no exclude pattern. A malformed pattern (such as
// "!delete_[*") fails closed: Filter then returns no tools at all, since a typo in a deny
// pattern must not let through the tools it aimed at. Filtering changes only what the agent
// is given: a tool filtered out here stays callable by MCP Apps through Set.Proxy when its
// _meta.ui.visibility allows.
func (t Tools) Filter(patterns ...string) Tools {
	out := make(Tools, 0, len(t))
	keep, ok := catalog.Filter(patterns) // internal/catalog: the servers file's globs
	for _, tool := range t {
		if ok && keep(tool.Name) {
			out = append(out, tool)
		}
	}
	return out
}
