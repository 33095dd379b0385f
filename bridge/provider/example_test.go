package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
)

// weatherServer dials an in-process MCP server with one tool whose "units" argument is
// optional, the case OpenAI strict mode cannot take as is.
func weatherServer() *bridge.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "forecast",
		Description: "Tomorrow's forecast for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"type":"string","enum":["C","F"]}},"required":["city"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ City, Units string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		if in.Units == "" {
			in.Units = "C"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: 21°%s, sunny (arguments %s)", in.City, in.Units, req.Params.Arguments)}}}, nil
	})
	s, err := bridge.Dial(context.Background(), bridge.ServerConfig{ID: "weather", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	return s
}

// One agent-loop turn with OpenAI Chat Completions in strict mode: the tools go into the
// request, the model's tool_calls come back, each is run and answered with a "tool"
// message. The optional "units" became required-but-nullable for strict mode; the model's
// null for it is dropped before the server sees the call.
func Example_openAI() {
	server := weatherServer()
	defer server.Close()
	ts, err := provider.New(provider.FormatOpenAI, server.Tools(), &provider.Options{Strict: true})
	if err != nil {
		panic(err)
	}
	tools, _ := json.Marshal(ts) // the request's "tools"
	fmt.Println(string(tools))

	// The assistant message of the response (network left out).
	reply := `{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"forecast","arguments":"{\"city\":\"Lyon\",\"units\":null}"}}]}`
	var msg struct {
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	_ = json.Unmarshal([]byte(reply), &msg)
	for _, call := range msg.ToolCalls {
		out, err := ts.Handle(context.Background(), call) // append to the messages
		fmt.Println(string(out), err)
	}
	// Output:
	// [{"type":"function","function":{"name":"forecast","description":"Tomorrow's forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"minLength: 1"},"units":{"type":["string","null"],"enum":["C","F",null]}},"required":["city","units"],"additionalProperties":false},"strict":true}}]
	// {"role":"tool","tool_call_id":"call_1","content":"Lyon: 21°C, sunny (arguments {\"city\":\"Lyon\"})"} <nil>
}

// The same turn with the Responses API: function_call items in, function_call_output items
// out.
func Example_openAIResponses() {
	server := weatherServer()
	defer server.Close()
	ts, _ := provider.New(provider.FormatOpenAIResponses, server.Tools(), nil)
	tools, _ := json.Marshal(ts)
	fmt.Println(string(tools))

	item := `{"type":"function_call","id":"fc_1","call_id":"call_9","name":"forecast","arguments":"{\"city\":\"Oslo\",\"units\":\"F\"}"}`
	out, err := ts.Handle(context.Background(), json.RawMessage(item))
	fmt.Println(string(out), err)
	// Output:
	// [{"type":"function","name":"forecast","description":"Tomorrow's forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"type":"string","enum":["C","F"]}},"required":["city"]},"strict":false}]
	// {"type":"function_call_output","call_id":"call_9","output":"Oslo: 21°F, sunny (arguments {\"city\":\"Oslo\",\"units\":\"F\"})"} <nil>
}

// One turn with Anthropic's Messages API: tool_use blocks in, tool_result blocks (for the
// next user message) out. Invalid arguments are answered with is_error, without reaching
// the server, so the model can correct itself.
func Example_anthropic() {
	server := weatherServer()
	defer server.Close()
	ts, _ := provider.New(provider.FormatAnthropic, server.Tools(), nil)
	tools, _ := json.Marshal(ts)
	fmt.Println(string(tools))

	reply := `{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"forecast","input":{"city":"Kyoto"}},{"type":"tool_use","id":"toolu_2","name":"forecast","input":{"city":""}}]}`
	var msg struct{ Content []json.RawMessage }
	_ = json.Unmarshal([]byte(reply), &msg)
	for _, block := range msg.Content {
		var b struct{ Type string }
		_ = json.Unmarshal(block, &b)
		if b.Type != "tool_use" {
			continue
		}
		out, _ := ts.Handle(context.Background(), block)
		fmt.Println(string(out))
	}
	// Output:
	// [{"name":"forecast","description":"Tomorrow's forecast for a city.","input_schema":{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"type":"string","enum":["C","F"]}},"required":["city"]}}]
	// {"type":"tool_result","tool_use_id":"toolu_1","content":"Kyoto: 21°C, sunny (arguments {\"city\":\"Kyoto\"})"}
	// {"type":"tool_result","tool_use_id":"toolu_2","content":"error: mcp server \"weather\": tools/call: tool \"forecast\": invalid arguments: at /city: minLength: got 0, want 1 (rule properties/city/minLength)","is_error":true}
}

// One turn with Gemini, using the OpenAPI-subset "parameters" field: functionCall parts in,
// functionResponse parts out.
func Example_gemini() {
	server := weatherServer()
	defer server.Close()
	ts, _ := provider.New(provider.FormatGemini, server.Tools(), &provider.Options{GeminiParameters: true})
	tools, _ := json.Marshal(ts)
	fmt.Println(string(tools))

	candidate := `{"content":{"role":"model","parts":[{"functionCall":{"name":"forecast","args":{"city":"Quito","units":"C"}}}]}}`
	var c struct {
		Content struct{ Parts []json.RawMessage }
	}
	_ = json.Unmarshal([]byte(candidate), &c)
	for _, part := range c.Content.Parts {
		out, err := ts.Handle(context.Background(), part)
		fmt.Println(string(out), err)
	}
	// Output:
	// [{"functionDeclarations":[{"name":"forecast","description":"Tomorrow's forecast for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","minLength":1},"units":{"type":"string","enum":["C","F"]}},"required":["city"]}}]}]
	// {"functionResponse":{"name":"forecast","response":{"output":"Quito: 21°C, sunny (arguments {\"city\":\"Quito\",\"units\":\"C\"})"}}} <nil>
}

// Lint says what each model API would reject in a schema, and Adapt what is left after
// adapting.
func ExampleLintSchema() {
	schema := json.RawMessage(`{"type":"object","properties":{"paths":{"type":"array"},"mode":{"type":["string","null"]}},"additionalProperties":false}`)
	for _, target := range provider.Targets() {
		for _, f := range provider.LintSchema(schema, target) {
			fmt.Println(f)
		}
		a, _ := provider.Adapt(schema, target)
		fmt.Printf("%s after adapting: %d left\n", target, len(a.Remaining))
	}
	// Output:
	// openai: array-items at /properties/paths: "type": "array" without "items"
	// openai after adapting: 0 left
	// openai-strict: strict-required at /properties/paths: optional property (and 1 more place)
	// openai-strict: array-items at /properties/paths: "type": "array" without "items"
	// openai-strict after adapting: 1 left
	// anthropic after adapting: 0 left
	// gemini after adapting: 0 left
	// gemini-parameters: gemini-unknown-field at /additionalProperties: "additionalProperties"
	// gemini-parameters: array-items at /properties/paths: "type": "array" without "items"
	// gemini-parameters: gemini-type-list at /properties/mode: ["string","null"]
	// gemini-parameters after adapting: 1 left
}

// Deferred loading with Anthropic: the forecast tool is sent with "defer_loading": true and
// a search_tools tool is added; the model's search is answered with a tool_reference block,
// after which the model calls forecast like any tool.
func Example_deferred() {
	server := weatherServer()
	defer server.Close()
	ts, err := provider.New(provider.FormatAnthropic, server.Tools(), &provider.Options{Defer: &provider.Deferral{}})
	if err != nil {
		panic(err)
	}
	tools, _ := json.Marshal(ts)
	var list []struct {
		Name         string `json:"name"`
		DeferLoading bool   `json:"defer_loading"`
	}
	_ = json.Unmarshal(tools, &list)
	fmt.Println(list)

	search := `{"type":"tool_use","id":"toolu_1","name":"search_tools","input":{"query":"weather tomorrow"}}`
	out, _ := ts.Handle(context.Background(), json.RawMessage(search))
	fmt.Println(string(out))
	// Output:
	// [{forecast true} {search_tools false}]
	// {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"forecast"}]}
}
