package eino_test

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/ttalk/mcpbridge/bridge/eino"
)

// An ADK agent whose tools are an MCP server's: the model (scripted here) calls forecast
// twice, once for a city the server has no station for; both answers reach its next turn
// (the ToolsNode runs a turn's tools concurrently; their events come as they finish).
func Example() {
	server := (&weather{}).dial() // any *bridge.Server, or a Set's Tools()
	defer server.Close()
	tools, err := eino.Tools(server.Tools(), nil)
	if err != nil {
		panic(err)
	}
	model := &scripted{replies: []*schema.Message{
		schema.AssistantMessage("", []schema.ToolCall{
			{ID: "1", Function: schema.FunctionCall{Name: "forecast", Arguments: `{"city":"Lyon"}`}},
			{ID: "2", Function: schema.FunctionCall{Name: "forecast", Arguments: `{"city":"Atlantis"}`}},
		}),
		schema.AssistantMessage("Sunny in Lyon; no data for Atlantis.", nil),
	}}
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "forecaster", Description: "weather", Model: model,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}},
	})
	if err != nil {
		panic(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Weather in Lyon and Atlantis?")
	for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
		if ev.Err != nil {
			panic(ev.Err)
		}
		if msg := ev.Output.MessageOutput.Message; msg != nil && msg.Content != "" {
			fmt.Printf("%s: %s\n", msg.Role, msg.Content)
		}
	}
	// Unordered output:
	// tool: Lyon: 21°C, sunny
	// tool: no weather station in Atlantis
	// assistant: Sunny in Lyon; no data for Atlantis.
}
