package bridge

import (
	"strings"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// SearchResult is one tool ranked for a query.
type SearchResult struct {
	Tool Tool
	// Score is the ranking score: higher is better; only the order means anything.
	Score float64
}

// ToolIndex ranks a fixed list of tools for natural-language queries (see package
// toolsearch for how). It is immutable and safe for concurrent use.
type ToolIndex struct {
	tools Tools
	ix    *toolsearch.Index
}

// Index builds a search index over t: each tool's name, title, description, parameter
// names and descriptions, its server's ID (ServerID, or Server's), and with a connection
// (Server) the server's name and instructions. Tools held as plain data, without Server,
// are ranked by their ServerID alike. Each inputSchema is read once. Building costs about
// as much as a few hundred queries; keep the index for repeated searches.
func (t Tools) Index() *ToolIndex {
	docs := make([]toolsearch.Document, len(t))
	status := map[*Server]ServerStatus{} // one Status per server, not per tool
	for i, tool := range t {
		docs[i] = searchDocument(tool, status)
	}
	return &ToolIndex{tools: t, ix: toolsearch.New(docs)}
}

// searchDocument is what the search index knows of a tool; status caches each server's
// Status.
func searchDocument(t Tool, status map[*Server]ServerStatus) toolsearch.Document {
	d := toolsearch.Document{Name: t.Name, Title: t.Title, Description: t.Description, Params: toolsearch.Params(t.Parameters), Server: t.ServerID}
	if s := t.Server; s != nil {
		st, ok := status[s]
		if !ok {
			st = s.Status()
			status[s] = st
		}
		d.Server = s.ID()
		if st.ServerName != "" && !strings.EqualFold(st.ServerName, s.ID()) {
			d.Server += " " + st.ServerName
		}
		d.Instructions = st.Instructions
	}
	return d
}

// Search returns the k tools of the index that best match query, best first (every match
// for k <= 0). The same tools and query give the same results in the same order.
func (x *ToolIndex) Search(query string, k int) []SearchResult {
	hits := x.ix.Search(query, k)
	out := make([]SearchResult, len(hits))
	for i, h := range hits {
		out[i] = SearchResult{Tool: x.tools[h.Doc], Score: h.Score}
	}
	return out
}

// Tools returns the tools the index was built over.
func (x *ToolIndex) Tools() Tools { return append(Tools(nil), x.tools...) }

// Search ranks t for query and returns the best k (every match for k <= 0); see
// ToolIndex.Search. It builds an index each call: for repeated searches over one list use
// Index.
func (t Tools) Search(query string, k int) []SearchResult { return t.Index().Search(query, k) }

// Search ranks the Set's model-visible tools for query and returns the best k (every match
// for k <= 0), best first. The index is built on the first search and kept.
func (set *Set) Search(query string, k int) []SearchResult {
	set.searchOnce.Do(func() { set.search = set.Tools().Index() })
	return set.search.Search(query, k)
}
