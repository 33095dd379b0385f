// Package gluetest is the MCP server the SDK glue modules (bridge/provider/openai,
// anthropic, gemini) test against: a go-sdk server in the same process, reached through
// bridge.Connect like any other, whose tools cover what a tool call can come to (a result,
// the tool's own failure, invalid arguments) and a schema whose property order and number
// spelling a careless conversion would lose.
package gluetest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// The fixture's tools.
const (
	// Echo answers "echo: <message>"; message is a required non-empty string.
	Echo = "echo"
	// Fail always fails as a tool (isError) with FailText.
	Fail = "fail"
	// Order answers "order: <arguments as the server received them>". Its schema is
	// OrderSchema: properties out of alphabetical order, a maximum no float64 holds, and the
	// optional "alpha" that OpenAI's strict mode makes nullable.
	Order = "order"
)

// FailText is what Fail reports.
const FailText = "the disk is full: free some space and try again"

// OrderSchema is Order's inputSchema, byte for byte.
const OrderSchema = `{"type":"object","properties":{"zeta":{"type":"integer","maximum":12345678901234567890},"alpha":{"type":"string"},"mid":{"type":"boolean"}},"required":["zeta"]}`

// Connect connects a Set to the fixture server (Config) with a discarding logger. Close the
// Set when done; a call after that fails with bridge.ErrServerClosed, the host's kind of
// failure.
func Connect(ctx context.Context) (*bridge.Set, error) {
	return bridge.Connect(ctx, []bridge.ServerConfig{Config()}, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
}

// Config is the fixture server as a bridge.ServerConfig (ID "shop", required): each dial
// starts a new go-sdk server in the process.
func Config() bridge.ServerConfig {
	return bridge.ServerConfig{ID: "shop", Required: true, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := newServer().Connect(context.Background(), st, nil)
		return ct, err
	}}
}

func newServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        Echo,
		Description: "Repeat a message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","minLength":1}},"required":["message"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Message string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return text("echo: " + in.Message), nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        Fail,
		Description: "A tool that always fails.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text(FailText)
		r.IsError = true
		return r, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        Order,
		Description: "Place an order.",
		InputSchema: json.RawMessage(OrderSchema),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(fmt.Sprintf("order: %s", req.Params.Arguments)), nil
	})
	return srv
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
