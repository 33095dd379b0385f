package results_test

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

func ExampleFlatten() {
	res := &mcp.CallToolResult{
		StructuredContent: map[string]any{"temp": 21.5, "unit": "°C"},
		Content: []mcp.Content{
			&mcp.TextContent{Text: `{"temp": 21.5, "unit": "°C"}`}, // an echo: dropped
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 5530)},
		},
	}
	text, err := results.Flatten(res, nil)
	fmt.Println(text, err)

	failed := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: "city not found"}},
	}
	_, err = results.Flatten(failed, nil)
	var toolErr *results.ToolError
	if errors.As(err, &toolErr) {
		fmt.Println("tool error:", toolErr.Text)
	}
	// Output:
	// {"temp":21.5,"unit":"°C"}
	// [image: image/png, 5.4 KB] <nil>
	// tool error: city not found
}

func ExampleTruncate() {
	fmt.Println(results.Truncate("héllo wörld, this text is a little too long for the cap of 64 bytes", 64))
	// Output:
	// héllo wörld, thi
	// …[truncated 33 bytes]…
	// he cap of 64 bytes
}
