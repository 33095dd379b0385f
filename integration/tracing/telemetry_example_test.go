package tracing_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ttalk/mcpbridge/internal/telemetry"
)

func Example_telemetry() {
	rec := tracetest.NewSpanRecorder()
	tel := telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil, nil, "v1.0.0")
	call := telemetry.Call{Method: "tools/call", Name: "add", Server: "calc", Origin: "handler"}
	ctx, span := tel.StartCall(context.Background(), call, func() telemetry.Net {
		return telemetry.Net{ProtocolVersion: "2025-11-25", Transport: "pipe"}
	})
	meta := tel.Inject(ctx, nil) // the request's params._meta carries the trace context
	tel.EndCall(span, call, telemetry.End{ErrorType: "tool_error", Message: "no such number", Duration: time.Millisecond})
	s := rec.Ended()[0]
	fmt.Println(s.Name(), s.Status().Code, s.Status().Description)
	_, ok := meta["traceparent"]
	fmt.Println("traceparent:", ok)
	// Output:
	// tools/call add Error no such number
	// traceparent: true
}
