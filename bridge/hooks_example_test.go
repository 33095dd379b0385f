package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// filesServer starts a Streamable HTTP MCP server with a destructive and a read-only tool.
// whoami answers with the Authorization header and the _meta the call arrived with.
func filesServer() *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	srv.AddTool(&mcp.Tool{Name: "delete_file", Title: "Delete a file", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("deleted"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "read_file", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("hello"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var keys []string
			for k, v := range req.Params.Meta {
				if k != "traceparent" && k != "tracestate" {
					keys = append(keys, fmt.Sprintf("%s=%v", k, v))
				}
			}
			sort.Strings(keys)
			return text("authorization: " + req.Extra.Header.Get("Authorization") + ", _meta: " + strings.Join(keys, " ")), nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// A host asks a human before destructive calls. BeforeCall sees the tool's annotations and
// the validated arguments; a denial never reaches the server, and the model reads the reason.
func ExampleOptions_beforeCall() {
	ts := filesServer()
	defer ts.Close()
	approve := func(ctx context.Context, c *bridge.Call) (bool, error) {
		// A real host would ask in its UI and wait; ctx ends with the call timeout.
		return false, nil
	}
	opts := &bridge.Options{
		Logger: slog.New(slog.DiscardHandler),
		BeforeCall: func(ctx context.Context, c *bridge.Call) error {
			// MCP's defaults: a tool is destructive unless it says it is read-only or not
			// destructive.
			if a := c.Annotations; a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint)) {
				return nil
			}
			ok, err := approve(ctx, c)
			if err != nil {
				return err
			}
			if !ok {
				return bridge.Deny("the user declined " + c.Title + " " + string(c.Args))
			}
			return nil
		},
	}
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{{ID: "files", URL: ts.URL}}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	tools := set.Tools()

	out, err := tools[1].Handler(context.Background(), json.RawMessage(`{"path":"a.txt"}`)) // read_file: read-only
	fmt.Println(out, err)
	out, err = tools[0].Handler(context.Background(), json.RawMessage(`{"path":"a.txt"}`)) // delete_file
	fmt.Println(out)
	fmt.Println(errors.Is(err, bridge.ErrDenied))
	// Output:
	// hello <nil>
	// tool call denied: the user declined Delete a file {"path":"a.txt"}
	// true
}

// An audit log: AfterCall sees every call's origin, outcome, duration and sizes, including
// calls refused before reaching the server.
func ExampleOptions_afterCall() {
	ts := filesServer()
	defer ts.Close()
	opts := &bridge.Options{
		Logger: slog.New(slog.DiscardHandler),
		AfterCall: func(ctx context.Context, c *bridge.Call, end *bridge.CallEnd) {
			// A real log would add end.Duration.
			fmt.Printf("audit: origin=%s server=%s tool=%s args=%dB result=%dB error=%q\n",
				c.Origin, c.Server.ID(), c.RemoteName, end.ArgsBytes, end.ResultBytes, end.Outcome)
		},
	}
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{{ID: "files", URL: ts.URL}}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	read := set.Tools()[1]
	_, _ = read.Handler(context.Background(), json.RawMessage(`{"path":"a.txt"}`))
	_, _ = read.Handler(context.Background(), json.RawMessage(`{"path":7}`))
	srv, _ := set.Lookup("files")
	_, _ = srv.CallTool(context.Background(), "read_file", nil)
	// Output:
	// audit: origin=handler server=files tool=read_file args=16B result=5B error=""
	// audit: origin=handler server=files tool=read_file args=10B result=0B error="invalid_arguments"
	// audit: origin=call_tool server=files tool=read_file args=2B result=5B error=""
}

// A multi-tenant host sends each user's own token with that user's calls, and a request ID
// in params._meta. The headers go only to the server's own host and never appear in logs
// or errors.
func ExampleWithCallHeaders() {
	ts := filesServer()
	defer ts.Close()
	cfg := bridge.ServerConfig{ID: "files", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer service-token"}}
	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	whoami := set.Tools()[2]

	ctx := bridge.WithCallHeaders(context.Background(), http.Header{"Authorization": {"Bearer alice-token"}})
	ctx = bridge.WithCallMeta(ctx, map[string]any{"requestId": "r-42"})
	out, _ := whoami.Handler(ctx, nil)
	fmt.Println(out)
	out, _ = whoami.Handler(context.Background(), nil) // other calls keep the configured header
	fmt.Println(out)
	// Output:
	// authorization: Bearer alice-token, _meta: requestId=r-42
	// authorization: Bearer service-token, _meta:
}

// Each agent gets its own subset of the tools, in one line; the globs are the servers file's.
func ExampleTools_Filter() {
	tools := bridge.Tools{{Name: "read_file"}, {Name: "write_file"}, {Name: "delete_file"}, {Name: "search"}}
	reader := tools.Filter("*_file", "!delete_*", "!write_*")
	fmt.Println(names(reader))
	fmt.Println(names(tools.Filter("!delete_*")))
	// Output:
	// [read_file]
	// [read_file write_file search]
}
