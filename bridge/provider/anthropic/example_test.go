package anthropic_test

import (
	"context"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/ttalk/mcpbridge/bridge"
	mcpanthropic "github.com/ttalk/mcpbridge/bridge/provider/anthropic"
	"github.com/ttalk/mcpbridge/internal/gluetest"
)

// recordedAPI serves replies, one per request, on loopback, in place of api.anthropic.com.
func recordedAPI(replies ...string) (opts []option.RequestOption, stop func()) {
	api := newFakeAPI(nil, replies...)
	return api.options(), api.srv.Close
}

// An agent loop with the Messages API: the SDK sends the MCP server's tools, each tool_use
// block the model writes runs on the server, and the tool_result blocks go back in the next
// user message until the model answers in words.
func Example() {
	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{gluetest.Config()}, nil)
	if err != nil {
		panic(err)
	}
	defer set.Close()
	api, stop := recordedAPI(exampleToolUses, done)
	defer stop()
	client := anthropic.NewClient(api...) // anthropic.NewClient() reads ANTHROPIC_API_KEY

	tools, err := mcpanthropic.NewMessages(set.Tools(), nil)
	if err != nil {
		panic(err)
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_6,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
		Tools:     tools.Tools(),
	}
	for {
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			panic(err)
		}
		var results []anthropic.ContentBlockParamUnion
		for _, block := range msg.Content {
			if block.Type == "tool_use" {
				result, err := tools.Call(ctx, block.AsToolUse()) // a tool's failure: is_error, not err
				if err != nil {
					panic(err) // the server could not be reached
				}
				r := result.OfToolResult
				fmt.Println(block.Name, "→", r.Content[0].OfText.Text, "is_error:", r.IsError.Value)
				results = append(results, result)
			}
		}
		if len(results) == 0 {
			fmt.Println(msg.Content[0].Text)
			return
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
	}
	// Output:
	// echo → echo: hello is_error: false
	// fail → the disk is full: free some space and try again is_error: true
	// Done.
}

const exampleToolUses = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-6",
"content":[{"type":"tool_use","id":"toolu_1","name":"echo","input":{"message":"hello"}},
 {"type":"tool_use","id":"toolu_2","name":"fail","input":{}}],
"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":40}}`
