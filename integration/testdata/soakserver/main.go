// Command soakserver is the stdio MCP server of the soak (integration's TestSoak). It serves
// "work" ({"id": string, "ms": integer}): it appends the id to the file $SOAK_LOG (one line
// per run, so the soak can count how often each call ran), sleeps ms milliseconds and
// answers "done <id>". Every $SOAK_STORM_EVERY (a Go duration; unset: never) it adds and
// removes a tool "extra" ten times, a storm of notifications/tools/list_changed. It exits
// when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// workSchema is the inputSchema of "work"; integration's soak serves the same over HTTP.
const workSchema = `{"type":"object","properties":{"id":{"type":"string"},"ms":{"type":"integer","minimum":0,"maximum":1000}},"required":["id"],"additionalProperties":false}`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "soakserver:", err)
		os.Exit(1)
	}
}

func run() error {
	log, err := os.OpenFile(os.Getenv("SOAK_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "work", Description: "Does a unit of work.", InputSchema: json.RawMessage(workSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				ID string `json:"id"`
				MS int    `json:"ms"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if _, err := log.WriteString(in.ID + "\n"); err != nil { // one write: appended whole
				return nil, err
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + in.ID}}}, nil
		})
	if every, err := time.ParseDuration(os.Getenv("SOAK_STORM_EVERY")); err == nil && every > 0 {
		go func() {
			for range time.Tick(every) {
				for range 10 {
					srv.AddTool(&mcp.Tool{Name: "extra", InputSchema: json.RawMessage(`{"type":"object"}`)},
						func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return &mcp.CallToolResult{}, nil
						})
					srv.RemoveTools("extra")
				}
			}
		}()
	}
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}
