package tracing_test

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ttalk/mcpbridge/bridge"
)

// With no tracer provider installed (in Options or globally), WithCallMeta sends exactly the
// caller's entries: not the trace context of the host's own span, nor its baggage (which may
// hold personal data). Tracing is off unless the host turns it on.
func TestCallMetaWithoutTracingSendsNoTraceContext(t *testing.T) {
	var hs hookServer
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	member, err := baggage.NewMember("user.email", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(member)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider() // the host's, not installed for the bridge
	ctx, span := tp.Tracer("host").Start(ctxT(t, 30*time.Second), "turn")
	defer span.End()
	ctx = baggage.ContextWithBaggage(ctx, bag)
	ctx = bridge.WithCallMeta(ctx, map[string]any{"tenant": "alice"})
	if _, err := byName(t, set.Tools(), "read_file").Handler(ctx, nil); err != nil {
		t.Fatal(err)
	}
	m := hs.lastMeta()
	if m["tenant"] != "alice" {
		t.Errorf("_meta %v lacks the caller's tenant", m)
	}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		if v, ok := m[k]; ok {
			t.Errorf("without a tracer provider the server got %s=%v", k, v)
		}
	}
}
