package callwatch_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/callwatch"
)

// call stands for the host's description of a call.
type call struct{ tool string }

func Example() {
	deny := func(ctx context.Context, c *call) error { return errors.New("no " + c.tool) }
	err, waited := callwatch.Before(context.Background(), deny, &call{tool: "rm"}, func(any) {})
	fmt.Println(err, waited)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	slow := func(ctx context.Context, c *call) error { time.Sleep(time.Second); return nil }
	err, waited = callwatch.Before(ctx, slow, &call{tool: "ls"}, func(any) {})
	fmt.Println(err, waited)

	callwatch.After(context.Background(), time.Second, func(ctx context.Context, c *call, n int) {
		fmt.Println(c.tool, n, ctx.Err())
	}, &call{tool: "ls"}, 3)

	fmt.Println(callwatch.ResultSize(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}))
	// Output:
	// no rm false
	// context deadline exceeded true
	// ls 3 <nil>
	// 5
}
