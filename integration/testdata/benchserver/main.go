// Command benchserver is the stdio MCP server of the integration benchmarks and load test.
// The benchmarks build it with `go build` into a temporary directory (the integration
// package has no TestMain to re-exec into).
//
// It serves one tool, "add" ({"a":number,"b":number} → the sum as text), plus -tools
// further tools with realistic schemas, after sleeping -delay (to model a slow start).
// It exits when stdin closes.
//
// With -http it serves Streamable HTTP on a loopback port instead (-stateless: go-sdk's
// stateless handler, which speaks protocol 2026-07-28; otherwise its default, stateful
// one), prints the endpoint URL on stdout, and exits when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
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
	useHTTP := flag.Bool("http", false, "serve Streamable HTTP on a loopback port")
	stateless := flag.Bool("stateless", false, "with -http: go-sdk's stateless handler")
	flag.Parse()
	var err error
	if *useHTTP {
		err = serveHTTP(*stateless)
	} else {
		err = run(*delay, *extra)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}

func run(delay time.Duration, extra int) error {
	time.Sleep(delay)
	return newServer(extra).Run(context.Background(), &mcp.StdioTransport{})
}

// serveHTTP serves newServer over Streamable HTTP until stdin closes.
func serveHTTP(stateless bool) error {
	srv := newServer(0)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = ln.Close()
	}()
	if err := http.Serve(ln, h); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

func newServer(extra int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "benchserver", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: json.RawMessage(addSchema)}, add)
	for i := range extra {
		name := "tool_" + strconv.Itoa(i)
		srv.AddTool(&mcp.Tool{Name: name, Description: "Extra tool " + name + ".", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}, add)
	}
	return srv
}

func add(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct{ A, B float64 }
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad arguments: " + err.Error()}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'g', -1, 64)}}}, nil
}
