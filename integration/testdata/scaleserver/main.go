// Command scaleserver serves the endpoints of integration's BenchmarkScale (a host with
// hundreds of servers). The benchmark builds it with `go build` into a temporary directory.
//
// Every endpoint is a go-sdk server offering "add" ({"a":number,"b":number} → the sum as
// text) and -per further tools taken in turn from the capture of the compatibility sweep's
// tools (-tools, bridge/toolsearch/testdata/sweep.json: names, titles, descriptions and
// schemas byte for byte), starting at the endpoint's index × -per, so that a thousand
// endpoints offer ten thousand tools in the sweep's words. Those tools answer "ok".
//
// Without -http it serves endpoint -index over stdio and exits when stdin closes. With
// -http it serves -endpoints endpoints over Streamable HTTP on one loopback port, at
// /mcp/<index> for index -first.. (-stateless: go-sdk's stateless handler, which speaks
// protocol 2026-07-28; otherwise its default, stateful one, 2025-11-25), prints the base
// URL (http://127.0.0.1:port/mcp/) on stdout, and exits when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addSchema must equal integration's benchAddSchema.
const addSchema = `{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false}`

func main() {
	toolsFile := flag.String("tools", "", "the sweep's tool capture (sweep.json)")
	per := flag.Int("per", 9, "tools from the capture per endpoint")
	index := flag.Int("index", 0, "stdio: the endpoint's index")
	useHTTP := flag.Bool("http", false, "serve Streamable HTTP on a loopback port")
	first := flag.Int("first", 0, "with -http: the index of the first endpoint")
	endpoints := flag.Int("endpoints", 1, "with -http: how many endpoints")
	stateless := flag.Bool("stateless", false, "with -http: go-sdk's stateless handler")
	flag.Parse()
	err := run(*toolsFile, *per, *index, *useHTTP, *first, *endpoints, *stateless)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleserver:", err)
		os.Exit(1)
	}
}

// captured is one tool of the capture.
type captured struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func run(toolsFile string, per, index int, useHTTP bool, first, endpoints int, stateless bool) error {
	var all []captured
	if toolsFile != "" {
		data, err := os.ReadFile(toolsFile)
		if err != nil {
			return err
		}
		var doc struct {
			Servers []struct {
				Tools []captured `json:"tools"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", toolsFile, err)
		}
		for _, s := range doc.Servers {
			all = append(all, s.Tools...)
		}
	}
	if len(all) == 0 {
		per = 0
	}
	if !useHTTP {
		return newServer(all, per, index).Run(context.Background(), &mcp.StdioTransport{})
	}
	mux := http.NewServeMux()
	opts := &mcp.StreamableHTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)}
	for i := first; i < first+endpoints; i++ {
		srv := newServer(all, per, i)
		mux.Handle("/mcp/"+strconv.Itoa(i), mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp/\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = ln.Close()
	}()
	if err := http.Serve(ln, mux); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// newServer is endpoint i: add, then per tools of all from i*per on.
func newServer(all []captured, per, i int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "scale-" + strconv.Itoa(i), Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	srv.AddTool(&mcp.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: json.RawMessage(addSchema)}, add)
	for j := range per {
		t := all[(i*per+j)%len(all)]
		srv.AddTool(&mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, ok)
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

func ok(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}
