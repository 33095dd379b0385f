package bridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

func searchServer(name, instructions string, tools ...*mcp.Tool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range tools {
		srv.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	}
	return srv
}

// Set.Search and Tools.Search rank the set's tools by name, description, parameters, server
// and instructions, the same way every time.
func TestSearch(t *testing.T) {
	schema := func(s string) json.RawMessage { return json.RawMessage(s) }
	gh := searchServer("github-mcp", "",
		&mcp.Tool{Name: "create_issue", Description: "Create a new issue in a repository", InputSchema: schema(`{"type":"object","properties":{"title":{"type":"string"}}}`)},
		&mcp.Tool{Name: "merge_pull_request", Description: "Merge a pull request", InputSchema: schema(`{"type":"object"}`)},
	)
	docs := searchServer("ctx", "Use this server to fetch current documentation for any library.",
		&mcp.Tool{Name: "query", Description: "Queries.", InputSchema: schema(`{"type":"object","properties":{"libraryId":{"type":"string","description":"Context7 library ID"}}}`)},
	)
	slack := searchServer("slack", "",
		&mcp.Tool{Name: "post_message", Description: "Post a message to a channel", InputSchema: schema(`{"type":"object","properties":{"channel_id":{"type":"string"}}}`)},
		&mcp.Tool{Name: "create_issue", Description: "Files a ticket", InputSchema: schema(`{"type":"object"}`)},
	)
	set, err := connectSet(t, []bridge.ServerConfig{
		inMemory("github", gh, nil, nil), inMemory("docs", docs, nil, nil), inMemory("slack", slack, nil, nil),
	}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	first := func(rs []bridge.SearchResult) string {
		if len(rs) == 0 {
			return ""
		}
		return rs[0].Tool.Name
	}
	for q, want := range map[string]string{
		"open a new issue on github":         "create_issue",
		"file an issue in slack":             "slack__create_issue", // the clash rename; the server named wins
		"merge the PR":                       "merge_pull_request",
		"library documentation":              "query",        // from the server's instructions
		"send a message to the team channel": "post_message", // description and parameter name
		"channel id":                         "post_message",
	} {
		if got := first(set.Search(q, 3)); got != want {
			t.Errorf("Set.Search(%q) = %s, want %s first", q, got, want)
		}
	}
	rs := set.Search("issue", 0)
	if len(rs) != 2 || rs[0].Tool.Handler == nil || rs[0].Tool.Server == nil {
		t.Errorf("Search(issue) = %+v: want both issue tools, callable", rs)
	}
	if !slices.EqualFunc(set.Search("issue", 0), rs, func(a, b bridge.SearchResult) bool { return a.Tool.Name == b.Tool.Name && a.Score == b.Score }) {
		t.Errorf("a second search differs")
	}
	sub := set.Tools().Filter("post_*", "query")
	if got := sub.Search("create an issue", 5); len(got) != 0 {
		t.Errorf("Tools.Search searched outside its tools: %+v", got)
	}
	if got := first(sub.Search("message", 5)); got != "post_message" {
		t.Errorf("Tools.Search(message) = %s", got)
	}
	// Tools as plain data (stored definitions, no connection) keep their server by ServerID.
	plain := set.Tools()
	for i := range plain {
		if plain[i].ServerID != plain[i].Server.ID() {
			t.Errorf("%s: ServerID %q, Server %q", plain[i].Name, plain[i].ServerID, plain[i].Server.ID())
		}
		plain[i].Server, plain[i].Handler = nil, nil
	}
	if got := plain.Search("github", 0); len(got) != 2 || got[0].Tool.ServerID != "github" || got[1].Tool.ServerID != "github" {
		t.Errorf("Search(github) over tools without a connection = %+v, want github's two tools: the server is lost", got)
	}
	if ix := sub.Index(); len(ix.Tools()) != 2 || first(ix.Search("library docs", 1)) != "query" {
		t.Errorf("Index over a subset: %d tools", len(ix.Tools()))
	}
}
