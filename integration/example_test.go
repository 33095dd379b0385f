package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// Example connects to the pinned server-everything over stdio, as the tests do (run `npm ci`
// in integration/ first), and calls its echo tool the way an agent loop would. It is compiled
// but not run by go test, since it needs node.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{
		ID:      "everything",
		Command: "node",
		Args:    []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"},
	}}, nil)
	if err != nil {
		log.Fatal(err) // nothing runs: invalid IDs, a Required server failed, or ctx ended
	}
	defer set.Close()
	for _, f := range set.Failed() {
		log.Print(f) // servers that failed are skipped; the rest are usable
	}
	for _, tool := range set.Tools() {
		if tool.Name != "echo" {
			continue
		}
		out, err := tool.Handler(ctx, json.RawMessage(`{"message":"hi"}`))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(out) // Echo: hi
	}
}
