package telemetry_test

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ttalk/mcpbridge/internal/telemetry"
)

// A call under the host's trace: the request's params._meta carries the W3C trace context,
// so the server's spans join the host's trace. The otel API's no-op provider stands in for
// the host's SDK here (its spans keep the parent's context); the example with the SDK's
// in-memory exporter, spans and events is integration/tracing's Example_telemetry (the
// SDK is a dependency of the integration module only).
func Example() {
	tel := telemetry.New(noop.NewTracerProvider(), nil, nil, "v1.0.0")
	host := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), host)
	call := telemetry.Call{Method: "tools/call", Name: "add", Server: "calc", Origin: "handler"}
	ctx, span := tel.StartCall(ctx, call, func() telemetry.Net {
		return telemetry.Net{ProtocolVersion: "2025-11-25", Transport: "pipe"}
	})
	meta := tel.Inject(ctx, map[string]any{"tenant": "alice"})
	tel.EndCall(span, call, telemetry.End{ErrorType: "tool_error", Message: "no such number", Duration: time.Millisecond})
	fmt.Println(meta["traceparent"], meta["tenant"])
	// Output:
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 alice
}
