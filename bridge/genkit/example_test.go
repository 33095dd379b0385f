package genkit_test

import (
	"context"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	mcpgenkit "github.com/ttalk/mcpbridge/bridge/genkit"
)

// Genkit's tool loop over an MCP server's tools: the model (scripted here) calls forecast
// twice, once for a city the server has no station for; both answers reach its next turn
// (Genkit runs a turn's tools concurrently and lists their answers as they finish).
func Example() {
	server := (&weather{}).dial() // any *bridge.Server, or a Set's Tools()
	defer server.Close()
	ctx := context.Background()
	g := genkit.Init(ctx)
	tools, err := mcpgenkit.Define(g, server.Tools())
	if err != nil {
		panic(err)
	}
	m := &scripted{replies: []*ai.Message{
		ai.NewModelMessage(
			ai.NewToolRequestPart(&ai.ToolRequest{Name: "forecast", Ref: "1", Input: map[string]any{"city": "Lyon"}}),
			ai.NewToolRequestPart(&ai.ToolRequest{Name: "forecast", Ref: "2", Input: map[string]any{"city": "Atlantis"}}),
		),
		ai.NewModelTextMessage("Sunny in Lyon; no data for Atlantis."),
	}}
	resp, err := genkit.Generate(ctx, g, ai.WithModel(m.define(g)), ai.WithPrompt("Weather in Lyon and Atlantis?"),
		ai.WithTools(mcpgenkit.Refs(tools)...))
	if err != nil {
		panic(err)
	}
	next := m.requests[1].Messages // what the model read in its second turn
	for _, msg := range next {
		for _, p := range msg.Content {
			if p.IsToolResponse() {
				fmt.Printf("tool %s: %v\n", p.ToolResponse.Ref, p.ToolResponse.Output)
			}
		}
	}
	fmt.Println(resp.Text())
	// Unordered output:
	// tool 1: Lyon: 21°C, sunny
	// tool 2: no weather station in Atlantis
	// Sunny in Lyon; no data for Atlantis.
}
