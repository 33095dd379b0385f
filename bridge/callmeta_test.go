package bridge_test

import (
	"context"
	"sync"
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

// BeforeCall sees the annotations the host's Tool carries for the tools that expose
// resources and prompts (read-only, closed world), so the README's approval policy lets
// those reads through without asking a person.
func TestExposedToolsCarryAnnotationsToHooks(t *testing.T) {
	docs := inProcess("docs", docsServer(true))
	docs.Expose = []string{bridge.ExposeResources, bridge.ExposePrompts}
	var asked []string
	var mu sync.Mutex
	opts := &bridge.Options{Logger: discard(), BeforeCall: func(_ context.Context, c *bridge.Call) error {
		if a := c.Annotations; a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint)) {
			return nil // reads go ahead (the README's policy)
		}
		mu.Lock()
		asked = append(asked, c.Tool)
		mu.Unlock()
		return bridge.Deny("a person must approve " + c.Tool)
	}}
	set, err := connectSet(t, []bridge.ServerConfig{docs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"docs__list_resources", "docs__list_prompts"} {
		tool := byName(t, set.Tools(), name)
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint {
			t.Fatalf("%s: Tool.Annotations = %+v, want read-only", name, a)
		}
		if _, err := tool.Handler(ctxT(t, 30*time.Second), nil); err != nil {
			t.Errorf("%s: %v, want the read to go ahead", name, err)
		}
	}
	if len(asked) > 0 {
		t.Errorf("BeforeCall asked a person for %v: it saw no read-only annotation", asked)
	}
}
