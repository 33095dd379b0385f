package gemini_test

import (
	"context"
	"fmt"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider/gemini"
	"github.com/ttalk/mcpbridge/internal/gluetest"
	"google.golang.org/genai"
)

// recordedAPI serves replies, one per request, on loopback, in place of
// generativelanguage.googleapis.com.
func recordedAPI(replies ...string) (cfg *genai.ClientConfig, stop func()) {
	api := newFakeAPI(nil, replies...)
	return &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: api.srv.URL}}, api.srv.Close
}

// An agent loop with generateContent: the SDK sends the MCP server's tools, each function
// call the model makes runs on the server, and the functionResponse parts go back in the
// next user content until the model answers in words.
func Example() {
	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{gluetest.Config()}, nil)
	if err != nil {
		panic(err)
	}
	defer set.Close()
	api, stop := recordedAPI(exampleCalls, done)
	defer stop()
	client, err := genai.NewClient(ctx, api) // genai.NewClient(ctx, nil) reads GEMINI_API_KEY
	if err != nil {
		panic(err)
	}

	fns, err := gemini.NewFunctions(set.Tools(), nil)
	if err != nil {
		panic(err)
	}
	config := &genai.GenerateContentConfig{Tools: fns.Tools()}
	contents := []*genai.Content{genai.NewContentFromText("Say hello.", genai.RoleUser)}
	for {
		resp, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config)
		if err != nil {
			panic(err)
		}
		calls := resp.FunctionCalls()
		if len(calls) == 0 {
			fmt.Println(resp.Text())
			return
		}
		var parts []*genai.Part
		for _, call := range calls {
			part, err := fns.Call(ctx, call) // a tool's failure: {"error": text}, not err
			if err != nil {
				panic(err) // the server could not be reached
			}
			fmt.Println(call.Name, "→", part.FunctionResponse.Response)
			parts = append(parts, part)
		}
		contents = append(contents, resp.Candidates[0].Content, genai.NewContentFromParts(parts, genai.RoleUser))
		config.Tools = fns.Tools() // grows with what searches loaded (provider.Options.Defer)
	}
	// Output:
	// echo → map[output:echo: hello]
	// fail → map[error:the disk is full: free some space and try again]
	// Done.
}

const exampleCalls = `{"candidates":[{"content":{"role":"model","parts":[
 {"functionCall":{"id":"fc-1","name":"echo","args":{"message":"hello"}}},
 {"functionCall":{"id":"fc-2","name":"fail","args":{}}}]},
"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-flash"}`
