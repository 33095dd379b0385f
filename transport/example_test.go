package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/transport"
)

func ExampleKinds() {
	kinds, err := transport.Kinds(transport.Spec{ID: "remote", URL: "https://alice:s3cret@example.com/mcp?token=abc"})
	fmt.Println(kinds, err)

	kinds, err = transport.Kinds(transport.Spec{ID: "local", Command: "npx", Args: []string{"-y", "some-server"}})
	fmt.Println(kinds, err)

	// Errors name the server and the field, never the URL's secrets.
	_, err = transport.Kinds(transport.Spec{ID: "bad", URL: "ftp://alice:s3cret@example.com/?token=abc"})
	fmt.Println(err)
	// Output:
	// [http sse] <nil>
	// [stdio] <nil>
	// url: scheme is not http or https
}

// ExampleOpen connects to a Streamable HTTP server, falling back to legacy
// SSE if needed, and reads a tool's input schema exactly as the server sent
// it (go-sdk's decoded Tool.InputSchema is a map: key order and big integer
// precision are lost there).
func ExampleOpen() {
	server := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "lookup",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","maximum":9007199254740993}},"required":["id"]}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()

	ctx := context.Background() // for sse, this ctx must outlive the session
	spec := transport.Spec{ID: "demo", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer example"}}
	kinds, err := transport.Kinds(spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	for _, k := range kinds {
		c, err := transport.Open(spec, k)
		if err != nil {
			fmt.Println(err)
			return
		}
		cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			c.Close()
			if c.FallbackToSSE() {
				continue
			}
			fmt.Println(err)
			return
		}
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				fmt.Println(err)
			}
		}
		for _, raw := range c.TakeTools() {
			var tool struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			_ = json.Unmarshal(raw, &tool)
			fmt.Printf("%s over %s: %s\n", tool.Name, k, tool.InputSchema)
		}
		cs.Close()
		c.Close()
		return
	}
	// Output:
	// lookup over http: {"type":"object","properties":{"id":{"type":"integer","maximum":9007199254740993}},"required":["id"]}
}
