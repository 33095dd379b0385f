package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/catalog"
)

// A re-listing keeps the remoteTool of a tool listed again as it was (so it holds no second
// copy of the catalogue) and replaces the one of a tool that changed; go-sdk's cached
// listing keeps only the names.
func TestRelistKeepsUnchangedTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "relist", Version: "1"}, nil)
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "same", Description: "Stays.", InputSchema: json.RawMessage(`{"type":"object"}`)}, ok)
	srv.AddTool(&mcp.Tool{Name: "moves", Description: "Before.", InputSchema: json.RawMessage(`{"type":"object"}`)}, ok)
	cfg := ServerConfig{ID: "relist", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}
	s := newServer(cfg, resolve(&Options{Logger: slog.New(slog.DiscardHandler)}), nil)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := s.pool.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed, raw, err := s.list(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	s.install(ctx, sess, listed, raw)
	for _, tool := range listed {
		if tool.Description != "" || tool.Title != "" {
			t.Errorf("go-sdk's cached tool %q keeps its description %q", tool.Name, tool.Description)
		}
	}
	before := map[string]*catalog.Tool{}
	for _, name := range []string{"same", "moves"} {
		if before[name], err = s.remoteTool(name); err != nil {
			t.Fatal(err)
		}
	}

	srv.AddTool(&mcp.Tool{Name: "moves", Description: "After.", InputSchema: json.RawMessage(`{"type":"object"}`)}, ok)
	s.relistOnce()

	if rt, _ := s.remoteTool("same"); rt != before["same"] {
		t.Error("the unchanged tool got a new remoteTool: the re-listing holds a second copy")
	}
	rt, _ := s.remoteTool("moves")
	if rt == before["moves"] || rt.Listed.Description != "After." {
		t.Errorf("the changed tool kept its old listing (description %q)", rt.Listed.Description)
	}
}
