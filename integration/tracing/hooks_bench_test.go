package tracing_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ttalk/mcpbridge/bridge"
)

// BenchmarkHandlerHooks measures one Handler call to an in-process go-sdk server with the
// hooks unset (the plain path), with no-op BeforeCall and AfterCall, and with tracing into
// an SDK provider that samples every span (no exporter). BENCHMARKS.md has the numbers:
//
//	go test -run '^$' -bench HandlerHooks -benchmem -count 3 ./integration/tracing/
func BenchmarkHandlerHooks(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tests := []struct {
		name string
		opts bridge.Options
	}{
		{"unset", bridge.Options{}},
		{"hooks", bridge.Options{
			BeforeCall: func(context.Context, *bridge.Call) error { return nil },
			AfterCall:  func(context.Context, *bridge.Call, *bridge.CallEnd) {},
		}},
		{"tracing", bridge.Options{TracerProvider: tp}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			opts := tt.opts
			opts.Logger = discard()
			set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{benchServer()}, &opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = set.Close() })
			h := set.Tools()[0].Handler
			args := json.RawMessage(`{"a":40,"b":2}`)
			ctx := context.Background()
			if _, err := h(ctx, args); err != nil { // warm-up: validator compiled
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if out, err := h(ctx, args); err != nil || out != "42" {
					b.Fatalf("%q, %v", out, err)
				}
			}
		})
	}
}

// benchServer is an in-process go-sdk server with one tool, add.
func benchServer() bridge.ServerConfig {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: json.RawMessage(addSchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("42"), nil })
	return inProcess("bench", srv)
}
