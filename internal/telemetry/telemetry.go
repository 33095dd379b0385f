// Package telemetry is the bridge's OpenTelemetry, through the API only: the span and
// metrics of each call (StartCall, EndCall), the span of a server's start-up
// (StartConnect), and trace context injected into a request's params._meta (Inject).
// Spans and metrics are recorded when a provider is installed, given to New or globally;
// otherwise nothing is started. It knows no bridge type: callers pass plain values.
package telemetry

import (
	"context"
	"maps"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// ScopeName is the instrumentation scope of the bridge's spans and metrics.
const ScopeName = "github.com/ttalk/mcpbridge/bridge"

// Attribute keys of the OpenTelemetry semantic conventions (v1.41.0), as plain keys: the
// semconv package's variables and their init would be linked into every program that
// imports bridge.
const (
	keyMCPProtocolVersion  = attribute.Key("mcp.protocol.version")
	keyNetworkTransport    = attribute.Key("network.transport")
	keyNetworkProtocolName = attribute.Key("network.protocol.name")
	keyMCPMethodName       = attribute.Key("mcp.method.name")
	keyMCPResourceURI      = attribute.Key("mcp.resource.uri")
	keyMCPSessionID        = attribute.Key("mcp.session.id")
	keyGenAIToolName       = attribute.Key("gen_ai.tool.name")
	keyGenAIOperationName  = attribute.Key("gen_ai.operation.name")
	keyGenAIPromptName     = attribute.Key("gen_ai.prompt.name")
	keyErrorType           = attribute.Key("error.type")
)

// Attribute keys of the bridge's own (not in the semantic conventions).
const (
	attrServerID    = attribute.Key("mcpbridge.server.id")
	attrOrigin      = attribute.Key("mcpbridge.call.origin")
	attrResultBytes = attribute.Key("mcpbridge.result.bytes")
	attrArgsBytes   = attribute.Key("mcpbridge.args.bytes")
	attrPhase       = attribute.Key("mcpbridge.phase")
	attrDuration    = attribute.Key("mcpbridge.duration_ms")
	attrTools       = attribute.Key("mcpbridge.tools")
)

// Telemetry is one Connect's view of OpenTelemetry.
//
// Its mutex guards the instruments; it is a leaf of the host's lock order: the host's
// providers are never called while it is held.
type Telemetry struct {
	tp      trace.TracerProvider // nil: the global one
	mp      metric.MeterProvider // nil: the global one
	prop    propagation.TextMapPropagator
	version string // the instrumentation version
	// unsetTP and unsetMP are the global providers as otel hands them out before a host
	// installs one (delegates that record nothing); nil when one was installed already.
	// While the global provider is still that delegate, tracing (metrics) stays off.
	unsetTP trace.TracerProvider
	unsetMP metric.MeterProvider

	mu     sync.Mutex
	instMP metric.MeterProvider // the provider inst was made from
	inst   *instruments
}

// instruments are the bridge's metric instruments from one MeterProvider.
type instruments struct {
	duration metric.Float64Histogram
	errors   metric.Int64Counter
}

// globalDelegate reports whether p is otel's global placeholder provider, the one it hands
// out until a host calls otel.SetTracerProvider (SetMeterProvider). otel exports no way to
// ask, so this recognises its unexported type.
func globalDelegate(p any, typeName string) bool {
	t := reflect.TypeOf(p)
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Name() == typeName &&
		t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global"
}

// New returns the telemetry of one Connect: tp, mp and prop as configured (nil: the global
// ones), version the instrumentation version of its spans and metrics.
func New(tp trace.TracerProvider, mp metric.MeterProvider, prop propagation.TextMapPropagator, version string) *Telemetry {
	t := &Telemetry{tp: tp, mp: mp, prop: prop, version: version}
	if t.tp == nil {
		if gp := otel.GetTracerProvider(); globalDelegate(gp, "tracerProvider") {
			t.unsetTP = gp
		}
	}
	if t.mp == nil {
		if gp := otel.GetMeterProvider(); globalDelegate(gp, "meterProvider") {
			t.unsetMP = gp
		}
	}
	return t
}

// HeldLocks names the Telemetry's locks that some goroutine holds now, for the host's tests of
// the lock order (a leaf: nothing holds it while logging or calling out).
func (t *Telemetry) HeldLocks() []string {
	if t.mu.TryLock() {
		t.mu.Unlock()
		return nil
	}
	return []string{"telemetry.mu"}
}

// tracer returns the tracer to use now, or nil when tracing is off.
func (t *Telemetry) tracer() trace.Tracer {
	tp := t.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
		if t.unsetTP != nil && tp == t.unsetTP {
			return nil
		}
	}
	return tp.Tracer(ScopeName, trace.WithInstrumentationVersion(t.version))
}

// meterProvider returns the provider to record metrics with now, or nil.
func (t *Telemetry) meterProvider() metric.MeterProvider {
	mp := t.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
		if t.unsetMP != nil && mp == t.unsetMP {
			return nil
		}
	}
	return mp
}

// Active reports whether spans or metrics are recorded now. Cheap: no allocation.
func (t *Telemetry) Active() bool {
	if t.tp != nil || t.mp != nil {
		return true
	}
	if t.unsetTP == nil || t.unsetMP == nil {
		return true // a global provider was installed before Connect
	}
	return otel.GetTracerProvider() != t.unsetTP || otel.GetMeterProvider() != t.unsetMP
}

// Tracing reports whether spans are recorded now (a tracer provider is installed, given to
// New or globally): only then does a request carry trace context and baggage. Cheap: no
// allocation.
func (t *Telemetry) Tracing() bool {
	if t.tp != nil {
		return true
	}
	return t.unsetTP == nil || otel.GetTracerProvider() != t.unsetTP
}

// instruments returns the metric instruments for the current provider, or nil.
func (t *Telemetry) instruments() *instruments {
	mp := t.meterProvider()
	if mp == nil {
		return nil
	}
	t.mu.Lock()
	inst, instMP := t.inst, t.instMP
	t.mu.Unlock()
	if inst != nil && instMP == mp {
		return inst
	}
	// The host's provider is called without the lock; two calls racing here both make
	// instruments, and the later one is kept.
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(t.version))
	dur, err1 := m.Float64Histogram("mcp.client.operation.duration",
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithUnit("s"))
	errs, err2 := m.Int64Counter("mcpbridge.call.errors",
		metric.WithDescription("Tool calls that did not succeed, by error.type (tool_error, denied, timeout, ...)."),
		metric.WithUnit("{call}"))
	if err1 != nil || err2 != nil {
		return nil
	}
	inst = &instruments{duration: dur, errors: errs}
	t.mu.Lock()
	t.instMP, t.inst = mp, inst
	t.mu.Unlock()
	return inst
}

// propagator returns the propagator that writes trace context into params._meta: the
// configured one, else the global one, else (when the global one writes nothing, as before a
// host sets one) W3C trace context and baggage, as the MCP specification describes.
func (t *Telemetry) propagator() propagation.TextMapPropagator {
	if t.prop != nil {
		return t.prop
	}
	if p := otel.GetTextMapPropagator(); len(p.Fields()) > 0 {
		return p
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Inject adds ctx's trace context to meta (allocating it when needed) and returns it.
func (t *Telemetry) Inject(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	carrier := propagation.MapCarrier{}
	t.propagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return meta
	}
	if meta == nil {
		meta = make(map[string]any, len(carrier))
	}
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}

// Net is how a server is reached, for span attributes.
type Net struct {
	// ProtocolVersion is the negotiated MCP version ("" when not known).
	ProtocolVersion string
	// Transport is the network transport ("pipe", "tcp"; "" when not known) and Protocol
	// the network protocol over it ("http", or "").
	Transport, Protocol string
}

func (n Net) attrs() []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if n.ProtocolVersion != "" {
		attrs = append(attrs, keyMCPProtocolVersion.String(n.ProtocolVersion))
	}
	if n.Transport != "" {
		attrs = append(attrs, keyNetworkTransport.String(n.Transport))
	}
	if n.Protocol != "" {
		attrs = append(attrs, keyNetworkProtocolName.String(n.Protocol))
	}
	return attrs
}

// Call describes one call for its span and metrics.
type Call struct {
	Method string // the MCP method: tools/call, prompts/get, resources/read, ...
	Name   string // the tool's or prompt's name on the server ("" when none)
	Server string // the server's ID
	Origin string // where the call came from (the host's name for it)
}

// CallSpan is one call's span and instruments; either may be nil.
type CallSpan struct {
	span trace.Span
	inst *instruments
}

// StartCall starts the span of a call (when tracing) and returns ctx carrying it; net is
// asked only when a span is started. The span is nil when nothing is recorded.
func (t *Telemetry) StartCall(ctx context.Context, c Call, net func() Net) (context.Context, *CallSpan) {
	if !t.Active() {
		return ctx, nil
	}
	cs := &CallSpan{inst: t.instruments()}
	if tr := t.tracer(); tr != nil {
		name := c.Method
		if c.Name != "" {
			name += " " + c.Name
		}
		attrs := []attribute.KeyValue{
			keyMCPMethodName.String(c.Method),
			attrServerID.String(c.Server),
			attrOrigin.String(c.Origin),
		}
		switch c.Method {
		case "tools/call":
			attrs = append(attrs, keyGenAIToolName.String(c.Name), keyGenAIOperationName.String("execute_tool"))
		case "prompts/get":
			if c.Name != "" {
				attrs = append(attrs, keyGenAIPromptName.String(c.Name))
			}
		}
		attrs = append(attrs, net().attrs()...)
		ctx, cs.span = tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, cs
}

// Target names what an exposed resource or prompt request is about, once the arguments
// are read: the prompt (in the span name, as the conventions ask) or the resource URI.
func (cs *CallSpan) Target(method, prompt, uri string) {
	if cs == nil || cs.span == nil {
		return
	}
	switch {
	case method == "prompts/get" && prompt != "":
		cs.span.SetName(method + " " + prompt)
		cs.span.SetAttributes(keyGenAIPromptName.String(prompt))
	case method == "resources/read" && uri != "":
		cs.span.SetAttributes(keyMCPResourceURI.String(uri))
	}
}

// End is how a call ended, for its span and metrics.
type End struct {
	// ErrorType is "" for a success, else the outcome (error.type: tool_error, denied, ...);
	// Message is then the error, on one line: when "", Err's text (on one line, at most
	// 300 bytes).
	ErrorType, Message     string
	Err                    error
	ArgsBytes, ResultBytes int
	Duration               time.Duration
}

// EndCall ends the span of call c and records its metrics.
func (t *Telemetry) EndCall(cs *CallSpan, c Call, end End) {
	if cs == nil {
		return
	}
	if cs.span != nil {
		if end.ErrorType != "" {
			if end.Message == "" && end.Err != nil {
				end.Message = redact.Line(end.Err.Error(), 300)
			}
			cs.span.SetAttributes(keyErrorType.String(end.ErrorType))
			cs.span.SetStatus(codes.Error, end.Message)
		}
		cs.span.SetAttributes(attrArgsBytes.Int(end.ArgsBytes), attrResultBytes.Int(end.ResultBytes))
		cs.span.End()
	}
	if cs.inst != nil {
		attrs := []attribute.KeyValue{keyMCPMethodName.String(c.Method)}
		if c.Method == "tools/call" {
			attrs = append(attrs, keyGenAIToolName.String(c.Name))
		}
		if end.ErrorType != "" {
			attrs = append(attrs, keyErrorType.String(end.ErrorType))
		}
		set := metric.WithAttributes(attrs...)
		ctx := context.Background()
		cs.inst.duration.Record(ctx, end.Duration.Seconds(), set)
		if end.ErrorType != "" {
			cs.inst.errors.Add(ctx, 1, set)
		}
	}
}

// SessionStarted records the session a call's request went out on.
func SessionStarted(ctx context.Context, id string) {
	if id == "" {
		return
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.SetAttributes(keyMCPSessionID.String(id))
	}
}

// TaskStatus records an MCP task's new status as an event of ctx's span.
func TaskStatus(ctx context.Context, id, status string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("mcp.task.status", trace.WithAttributes(
			attribute.String("mcp.task.id", id),
			attribute.String("mcp.task.status", status),
		))
	}
}

// ConnectSpan follows one server's start-up.
type ConnectSpan struct{ span trace.Span }

// StartConnect starts the span of server id's start-up, or returns nil.
func (t *Telemetry) StartConnect(ctx context.Context, id string) (context.Context, *ConnectSpan) {
	if !t.Active() {
		return ctx, nil
	}
	tr := t.tracer()
	if tr == nil {
		return ctx, nil
	}
	cs := &ConnectSpan{}
	ctx, cs.span = tr.Start(ctx, "connect "+id, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrServerID.String(id)))
	return ctx, cs
}

// PhaseDone records that start-up phase phase ended after d.
func (c *ConnectSpan) PhaseDone(phase string, d time.Duration) {
	if c == nil {
		return
	}
	c.span.AddEvent(phase, trace.WithAttributes(attrPhase.String(phase), attrDuration.Float64(float64(d)/float64(time.Millisecond))))
}

// Fail ends the span of a start-up that failed in phase with err (its text on one line, at
// most 300 bytes).
func (c *ConnectSpan) Fail(phase string, err error) {
	if c == nil {
		return
	}
	c.span.SetAttributes(attrPhase.String(phase), keyErrorType.String(phase))
	c.span.SetStatus(codes.Error, redact.Line(err.Error(), 300))
	c.span.End()
}

// End ends the span of a start-up that succeeded, with how the server is reached and its
// tool count; net is nil when there is no server to describe.
func (c *ConnectSpan) End(net func() Net, tools func() int) {
	if c == nil {
		return
	}
	if net != nil {
		c.span.SetAttributes(net().attrs()...)
		c.span.SetAttributes(attrTools.Int(tools()))
	}
	c.span.End()
}

// metaKey is the context key of WithMeta's entries.
type metaKey struct{}

// WithMeta returns a copy of ctx whose requests carry meta in params._meta
// (bridge.WithCallMeta). A later WithMeta merges, its values winning.
func WithMeta(ctx context.Context, meta map[string]any) context.Context {
	merged := maps.Clone(callerMeta(ctx))
	if merged == nil {
		merged = make(map[string]any, len(meta))
	}
	maps.Copy(merged, meta)
	return context.WithValue(ctx, metaKey{}, merged)
}

// callerMeta returns the _meta entries WithMeta put on ctx, or nil.
func callerMeta(ctx context.Context) map[string]any {
	m, _ := ctx.Value(metaKey{}).(map[string]any)
	return m
}

// RequestMeta returns the _meta for a request made under ctx: WithMeta's entries and, only
// while t has a tracer provider installed, the trace context of ctx's span and its baggage.
// Without one, nothing of ctx's trace context or baggage (which may hold personal data)
// leaves the process. nil when there is nothing (the common case, which allocates nothing).
func (t *Telemetry) RequestMeta(ctx context.Context) map[string]any {
	user := callerMeta(ctx)
	tracing := t.Tracing()
	if user == nil && !tracing {
		return nil
	}
	var meta map[string]any
	if user != nil {
		meta = maps.Clone(user)
	}
	if !tracing {
		return meta
	}
	return t.Inject(ctx, meta)
}
