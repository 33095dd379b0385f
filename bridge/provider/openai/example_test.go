package openai_test

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	mcpopenai "github.com/ttalk/mcpbridge/bridge/provider/openai"
	"github.com/ttalk/mcpbridge/internal/gluetest"
)

// recordedAPI serves replies, one per request, on loopback, in place of api.openai.com.
func recordedAPI(replies ...string) (opts []option.RequestOption, stop func()) {
	api := newFakeAPI(nil, replies...)
	return api.options(), api.srv.Close
}

// An agent loop with Chat Completions: the SDK sends the MCP server's tools, each tool call
// the model makes runs on the server, and the answers go back in the next request until the
// model answers in words.
func Example_chat() {
	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{gluetest.Config()}, nil)
	if err != nil {
		panic(err)
	}
	defer set.Close()
	api, stop := recordedAPI(exampleChatCall, chatDone)
	defer stop()
	client := openai.NewClient(api...) // openai.NewClient() reads OPENAI_API_KEY

	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Strict: true})
	if err != nil {
		panic(err)
	}
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4_1,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
		Tools:    chat.Tools(),
	}
	for {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			panic(err)
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			fmt.Println(msg.Content)
			return
		}
		params.Messages = append(params.Messages, msg.ToParam())
		for _, call := range msg.ToolCalls {
			reply, err := chat.Call(ctx, call) // a tool's failure is text for the model, not err
			if err != nil {
				panic(err) // the server could not be reached
			}
			fmt.Println(call.Function.Name, "→", reply.OfTool.Content.OfString.Value)
			params.Messages = append(params.Messages, reply)
		}
		params.Tools = chat.Tools() // grows with what searches loaded (provider.Options.Defer)
	}
	// Output:
	// echo → echo: hello
	// fail → the disk is full: free some space and try again
	// Done.
}

// The same loop with the Responses API: function_call items in, function_call_output items
// out.
func Example_responses() {
	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{gluetest.Config()}, nil)
	if err != nil {
		panic(err)
	}
	defer set.Close()
	api, stop := recordedAPI(responsesCalls, responsesDone)
	defer stop()
	client := openai.NewClient(api...)

	tools, err := mcpopenai.NewResponses(set.Tools(), &provider.Options{Strict: true})
	if err != nil {
		panic(err)
	}
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT4_1,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hi.")},
		Tools: tools.Tools(),
	}
	for {
		resp, err := client.Responses.New(ctx, params)
		if err != nil {
			panic(err)
		}
		var input []responses.ResponseInputItemUnionParam
		for _, item := range resp.Output {
			if item.Type == "function_call" {
				out, err := tools.Call(ctx, item.AsFunctionCall())
				if err != nil {
					panic(err)
				}
				fmt.Println(item.Name, "→", out.OfFunctionCallOutput.Output.OfString.Value)
				input = append(input, out)
			}
		}
		if len(input) == 0 {
			fmt.Println(resp.OutputText())
			return
		}
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
		params.PreviousResponseID = openai.String(resp.ID)
	}
	// Output:
	// echo → echo: hi
	// fail → the disk is full: free some space and try again
	// Done.
}

const exampleChatCall = `{"id":"chatcmpl-1","object":"chat.completion","created":1764650000,"model":"gpt-4.1-2025-04-14",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
"tool_calls":[
 {"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"message\":\"hello\"}"}},
 {"id":"call_2","type":"function","function":{"name":"fail","arguments":"{}"}}]},
"logprobs":null,"finish_reason":"tool_calls"}]}`
