package expose_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/expose"
)

func Example() {
	for _, t := range expose.Tools() {
		fmt.Println(t.Stem, t.Method, expose.Target(t.Method, expose.Input{URI: "file:///a", Name: "greet"}))
	}
	res := expose.PromptResult(&mcp.GetPromptResult{
		Description: "A greeting",
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}},
	})
	for _, c := range res.Content {
		fmt.Println(c.(*mcp.TextContent).Text)
	}
	// Output:
	// list_resources resources/list resources/list
	// read_resource resources/read resource "file:///a"
	// list_prompts prompts/list prompts/list
	// get_prompt prompts/get prompt "greet"
	// A greeting
	// user: hello
}
