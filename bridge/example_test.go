package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// exampleServer starts a small Streamable HTTP MCP server with a "greet" tool.
func exampleServer() *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "greet",
		Description: "Greets someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if in.Name == "nobody" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "nobody to greet"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil
	})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// The one-liner: dial every server, list its tools, convert them; a server that fails is
// logged through slog.Default() and skipped. Here one go-sdk server over Streamable HTTP;
// yours usually come from a servers file (bridge.LoadConfig).
func ExampleConnectServers() {
	ts := exampleServer()
	defer ts.Close()

	tools := bridge.ConnectServers([]bridge.ServerConfig{{ID: "greeter", URL: ts.URL + "/mcp"}})
	defer tools.Close() // closes every server behind them
	for _, t := range tools {
		out, err := t.Handler(context.Background(), json.RawMessage(`{"name":"Ada"}`))
		fmt.Printf("%s: %s %v\n", t.Name, out, err)
	}
	// Output:
	// greet: Hello, Ada! <nil>
}

// An agent connects its MCP servers once, hands the tools to the model, and calls a tool's
// Handler when the model asks for it.
func ExampleConnect() {
	ts := exampleServer()
	defer ts.Close()

	cfgs := []bridge.ServerConfig{
		{ID: "greeter", URL: ts.URL + "/mcp"},
		{ID: "broken", Command: "/no/such/mcp-server"}, // logged and skipped
	}
	set, err := bridge.Connect(context.Background(), cfgs, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err) // nothing runs: invalid IDs, a Required server failed, or ctx ended
		return
	}
	defer set.Close()
	for _, se := range set.Failed() {
		fmt.Printf("skipped %s (%s)\n", se.Server, se.Phase)
	}
	tools := set.Tools()

	defs, _ := json.Marshal(tools) // what a model API receives
	fmt.Println(string(defs))

	out, err := tools[0].Handler(context.Background(), json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(out, err)

	_, err = tools[0].Handler(context.Background(), json.RawMessage(`{"name":"nobody"}`))
	var te *results.ToolError
	fmt.Println(errors.As(err, &te), err) // the tool's own failure, for the model to read

	_, err = tools[0].Handler(context.Background(), json.RawMessage(`{"name":42}`))
	fmt.Println(errors.Is(err, bridge.ErrInvalidArguments))
	// Output:
	// skipped broken (start)
	// [{"name":"greet","description":"Greets someone.","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}]
	// Hello, Ada! <nil>
	// true nobody to greet
	// true
}
