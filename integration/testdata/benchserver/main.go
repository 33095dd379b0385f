// Command benchserver is the stdio MCP server of the integration benchmarks and load test.
// The benchmarks build it with `go build` into a temporary directory (the integration
// package has no TestMain to re-exec into).
//
// It serves one tool, "add" ({"a":number,"b":number} → the sum as text), plus -tools
// further tools with realistic schemas, after sleeping -delay (to model a slow start).
// It exits when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addSchema must equal integration's benchAddSchema.
const addSchema = `{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false}`

func main() {
	delay := flag.Duration("delay", 0, "sleep this long before serving")
	extra := flag.Int("tools", 0, "number of extra tools")
	flag.Parse()
	if err := run(*delay, *extra); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}

func run(delay time.Duration, extra int) error {
	time.Sleep(delay)
	srv := mcp.NewServer(&mcp.Implementation{Name: "benchserver", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: json.RawMessage(addSchema)}, add)
	for i := range extra {
		name := "tool_" + strconv.Itoa(i)
		srv.AddTool(&mcp.Tool{Name: name, Description: "Extra tool " + name + ".", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}, add)
	}
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

func add(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct{ A, B float64 }
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad arguments: " + err.Error()}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'g', -1, 64)}}}, nil
}
