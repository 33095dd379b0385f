package serve_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/serve"
)

// Serve a Set's page on loopback until the context ends.
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hello", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "Says hello."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
		})
	cfg := bridge.ServerConfig{ID: "hello", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{cfg},
		&bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	h, err := serve.Listen(serve.Options{Set: set})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	fmt.Println(strings.HasPrefix(h.URL(), "http://127.0.0.1:"), strings.Contains(h.URL(), "?token="))
	stop()
	fmt.Println(<-done)
	// Output:
	// true true
	// <nil>
}
