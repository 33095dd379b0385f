package tracing_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ttalk/mcpbridge/bridge"
)

// Tracing: with a TracerProvider (here the SDK's, as a host installs it; or the global one)
// each server's start-up and each call get a span, and the call's trace context reaches the
// server in params._meta, so the server's own spans join the host's trace.
//
// A trace from the SDK's in-memory exporter (one agent run: assembly, then a turn with two
// calls to a Streamable HTTP server), printed as a tree (Example_tracing builds one).
// mcp.protocol.version is what the bridge negotiated with that server, a go-sdk stateful
// Streamable HTTP server that offers versions up to 2025-11-25; the bridge pins none:
//
//	agent run  [internal] span=a5e46a883aa857b9 99.39ms
//	  connect files  [client] span=2674fc121f272e1b 80.16ms
//	      mcpbridge.server.id=files
//	      mcp.protocol.version=2025-11-25
//	      network.transport=tcp
//	      network.protocol.name=http
//	      mcpbridge.tools=3
//	      event initialize mcpbridge.phase=initialize mcpbridge.duration_ms=78.468055
//	      event tools/list mcpbridge.phase=tools/list mcpbridge.duration_ms=1.10838
//	  agent turn 1  [internal] span=7642966453dee7b1 12.34ms
//	    tools/call delete_file  [client] span=9256fe62b6dd13af 11.3ms
//	        mcp.method.name=tools/call
//	        mcpbridge.server.id=files
//	        mcpbridge.call.origin=handler
//	        gen_ai.tool.name=delete_file
//	        gen_ai.operation.name=execute_tool
//	        mcp.protocol.version=2025-11-25
//	        network.transport=tcp
//	        network.protocol.name=http
//	        mcp.session.id=YFZLVN6H6B5PWWSC2W7ECKIRVQ
//	        mcpbridge.args.bytes=20
//	        mcpbridge.result.bytes=7
//	    tools/call read_file  [client] span=1f56e831bdd91bc7 970µs
//	        (same attributes)
//
// and the _meta the server received with each call:
//
//	map[traceparent:00-eb076aa1d0e26a8ee0936d297d039629-9256fe62b6dd13af-01]
//	map[traceparent:00-eb076aa1d0e26a8ee0936d297d039629-1f56e831bdd91bc7-01]
func Example_tracing() {
	ts := filesServer()
	defer ts.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	set, err := bridge.Connect(context.Background(), []bridge.ServerConfig{{ID: "files", URL: ts.URL}},
		&bridge.Options{Logger: slog.New(slog.DiscardHandler), TracerProvider: tp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	ctx, turn := tp.Tracer("agent").Start(context.Background(), "agent turn")
	_, _ = set.Tools()[1].Handler(ctx, nil)
	turn.End()

	spans := exp.GetSpans()
	parent := map[string]string{}
	for _, s := range spans {
		parent[s.SpanContext.SpanID().String()] = s.Name
	}
	for _, s := range spans {
		var events []string
		for _, e := range s.Events {
			events = append(events, e.Name)
		}
		var attrs []string
		for _, kv := range s.Attributes {
			if k := string(kv.Key); slices.Contains([]string{"mcp.method.name", "gen_ai.tool.name", "mcpbridge.server.id"}, k) {
				attrs = append(attrs, k+"="+kv.Value.String())
			}
		}
		fmt.Printf("%s (parent %q) events %v %v\n", s.Name, parent[s.Parent.SpanID().String()], events, attrs)
	}
	// Output:
	// connect files (parent "") events [initialize tools/list] [mcpbridge.server.id=files]
	// tools/call read_file (parent "agent turn") events [] [mcp.method.name=tools/call mcpbridge.server.id=files gen_ai.tool.name=read_file]
	// agent turn (parent "") events [] []
}
