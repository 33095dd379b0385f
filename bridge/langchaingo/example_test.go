package langchaingo_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	mcplc "github.com/ttalk/mcpbridge/bridge/langchaingo"
)

// A langchaingo agent whose tools are an MCP server's: the model (scripted here) calls
// forecast for a city the server has no station for, reads the failure, tries again.
func Example() {
	server := (&weather{}).dial() // any *bridge.Server, or a Set's Tools()
	defer server.Close()
	m := &scripted{replies: []*llms.ContentChoice{
		{Content: "Action: forecast\nAction Input: {\"city\":\"Atlantis\"}"},
		{Content: "Action: forecast\nAction Input: {\"city\":\"Lyon\"}"},
		{Content: "Final Answer: Sunny in Lyon; no data for Atlantis."},
	}}
	agent := agents.NewOneShotAgent(m, mcplc.Tools(server.Tools()))
	answer, err := chains.Run(context.Background(), agents.NewExecutor(agent), "Weather in Atlantis or Lyon?")
	if err != nil {
		panic(err)
	}
	fmt.Println(mcplc.Tools(server.Tools())[0].Description())
	fmt.Println(answer)
	// Output:
	// Tomorrow's forecast for a city.
	// Input: a JSON object matching this JSON Schema: {"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","maximum":12345678901234567890}},"required":["city"]}
	// Sunny in Lyon; no data for Atlantis.
}

// Function calling with an llms.Model and no agent: Functions goes into the request, Run
// answers each tool call of the reply.
func ExampleRun() {
	server := (&weather{}).dial()
	defer server.Close()
	tools := server.Tools()
	m := &scripted{replies: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{
		{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "forecast", Arguments: `{"city":"Lyon"}`}},
	}}}}
	ctx := context.Background()
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Lyon?")},
		llms.WithTools(mcplc.Functions(tools)))
	if err != nil {
		panic(err)
	}
	for _, call := range resp.Choices[0].ToolCalls {
		r, err := mcplc.Run(ctx, tools, call) // send in a message of role llms.ChatMessageTypeTool
		fmt.Printf("%s %s: %s %v\n", r.ToolCallID, r.Name, r.Content, err)
	}
	// Output:
	// call_1 forecast: Lyon: 21°C, sunny <nil>
}
