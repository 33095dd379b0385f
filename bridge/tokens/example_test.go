package tokens_test

import (
	"encoding/json"
	"fmt"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
)

func Example() {
	c := tokens.New()
	tool := bridge.Tool{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	fmt.Println(c.Count("hello world"), "tokens")
	fmt.Println(c.Tool(tool), "tokens for the definition")
	// Output:
	// 2 tokens
	// 34 tokens for the definition
}
