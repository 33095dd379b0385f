package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// weather is a real go-sdk MCP server, dialled in process, that records what it ran.
type weather struct {
	release chan struct{} // a call for "Slow" sends two progress notifications, then waits for it

	mu    sync.Mutex
	calls []string // tool name and arguments as the server received them
}

func (w *weather) ran() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

func (w *weather) record(req *mcp.CallToolRequest) {
	w.mu.Lock()
	w.calls = append(w.calls, req.Params.Name+" "+string(req.Params.Arguments))
	w.mu.Unlock()
}

const forecastSchema = `{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","maximum":12345678901234567890}},"required":["city"]}`

// dial starts the server and connects a bridge.Server to it; BeforeCall denies "secret".
func (w *weather) dial() *bridge.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "forecast", Description: "Tomorrow's forecast for a city.", InputSchema: json.RawMessage(forecastSchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			w.record(req)
			var in struct{ City string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if in.City == "Atlantis" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no weather station in Atlantis"}}}, nil
			}
			if tok := req.Params.GetProgressToken(); tok != nil && in.City == "Slow" {
				for i := 1; i <= 2; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprintf("station %d of 2", i)})
				}
				select {
				case <-w.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.City + ": 21°C, sunny"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "secret", Description: "Never allowed.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			w.record(req)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "leaked"}}}, nil
		})
	s, err := bridge.Dial(context.Background(), bridge.ServerConfig{ID: "weather", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}, &bridge.Options{
		Logger: slog.New(slog.DiscardHandler),
		BeforeCall: func(_ context.Context, c *bridge.Call) error {
			if c.Tool == "secret" {
				return bridge.Deny("the secret tool is off limits")
			}
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	return s
}
