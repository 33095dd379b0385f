package bridge

import (
	"context"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/transport"
)

// OpenTelemetry (see "Tracing" in doc.go): the API only. Spans and metrics are recorded when
// a provider is installed, through Options or globally; otherwise nothing is started.

// scopeName is the instrumentation scope of the bridge's spans and metrics.
const scopeName = "github.com/ttalk/mcpbridge/bridge"

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

// telemetry is one Connect's view of OpenTelemetry.
type telemetry struct {
	tp   trace.TracerProvider // Options.TracerProvider; nil: the global one
	mp   metric.MeterProvider // Options.MeterProvider; nil: the global one
	prop propagation.TextMapPropagator
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

func newTelemetry(o *Options) *telemetry {
	t := &telemetry{tp: o.TracerProvider, mp: o.MeterProvider, prop: o.Propagator}
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

// tracer returns the tracer to use now, or nil when tracing is off.
func (t *telemetry) tracer() trace.Tracer {
	tp := t.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
		if t.unsetTP != nil && tp == t.unsetTP {
			return nil
		}
	}
	return tp.Tracer(scopeName, trace.WithInstrumentationVersion(moduleVersion()))
}

// meterProvider returns the provider to record metrics with now, or nil.
func (t *telemetry) meterProvider() metric.MeterProvider {
	mp := t.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
		if t.unsetMP != nil && mp == t.unsetMP {
			return nil
		}
	}
	return mp
}

// active reports whether spans or metrics are recorded now. Cheap: no allocation.
func (t *telemetry) active() bool {
	if t.tp != nil || t.mp != nil {
		return true
	}
	if t.unsetTP == nil || t.unsetMP == nil {
		return true // a global provider was installed before Connect
	}
	return otel.GetTracerProvider() != t.unsetTP || otel.GetMeterProvider() != t.unsetMP
}

// tracing reports whether spans are recorded now (a tracer provider is installed, in
// Options or globally): only then does a request carry trace context and baggage. Cheap:
// no allocation.
func (t *telemetry) tracing() bool {
	if t.tp != nil {
		return true
	}
	return t.unsetTP == nil || otel.GetTracerProvider() != t.unsetTP
}

// instruments returns the metric instruments for the current provider, or nil.
func (t *telemetry) instruments() *instruments {
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
	m := mp.Meter(scopeName, metric.WithInstrumentationVersion(moduleVersion()))
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
func (t *telemetry) propagator() propagation.TextMapPropagator {
	if t.prop != nil {
		return t.prop
	}
	if p := otel.GetTextMapPropagator(); len(p.Fields()) > 0 {
		return p
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// inject adds ctx's trace context to meta (allocating it when needed) and returns it.
func (t *telemetry) inject(ctx context.Context, meta map[string]any) map[string]any {
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

// callSpan is one call's span and instruments; either may be nil.
type callSpan struct {
	span trace.Span
	inst *instruments
}

// startCall starts the span of a call (when tracing) and returns ctx carrying it.
func (t *telemetry) startCall(ctx context.Context, s *Server, c *Call) (context.Context, *callSpan) {
	if !t.active() {
		return ctx, nil
	}
	cs := &callSpan{inst: t.instruments()}
	if tr := t.tracer(); tr != nil {
		name := c.Method
		if c.RemoteName != "" {
			name += " " + c.RemoteName
		}
		attrs := []attribute.KeyValue{
			semconv.McpMethodNameKey.String(c.Method),
			attrServerID.String(s.cfg.ID),
			attrOrigin.String(c.Origin.String()),
		}
		switch c.Method {
		case "tools/call":
			attrs = append(attrs, semconv.GenAIToolName(c.RemoteName), semconv.GenAIOperationNameExecuteTool)
		case "prompts/get":
			if c.RemoteName != "" {
				attrs = append(attrs, semconv.GenAIPromptName(c.RemoteName))
			}
		}
		attrs = append(attrs, s.netAttrs()...)
		ctx, cs.span = tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, cs
}

// target names what an exposed resource or prompt request is about, once the arguments
// are read: the prompt (in the span name, as the conventions ask) or the resource URI.
func (cs *callSpan) target(method, prompt, uri string) {
	if cs == nil || cs.span == nil {
		return
	}
	switch {
	case method == "prompts/get" && prompt != "":
		cs.span.SetName(method + " " + prompt)
		cs.span.SetAttributes(semconv.GenAIPromptName(prompt))
	case method == "resources/read" && uri != "":
		cs.span.SetAttributes(semconv.McpResourceURI(uri))
	}
}

// netAttrs describes how the server is reached: protocol version and network transport.
func (s *Server) netAttrs() []attribute.KeyValue {
	st := s.Status()
	var attrs []attribute.KeyValue
	if st.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(st.ProtocolVersion))
	}
	switch transport.Kind(st.Transport) {
	case transport.KindStdio:
		attrs = append(attrs, semconv.NetworkTransportPipe)
	case transport.KindHTTP, transport.KindSSE:
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	}
	return attrs
}

// sessionStarted records the session a call's request went out on.
func sessionStarted(ctx context.Context, id string) {
	if id == "" {
		return
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.SetAttributes(semconv.McpSessionID(id))
	}
}

// endCall ends a call's span and records its metrics.
func (t *telemetry) endCall(cs *callSpan, c *Call, end *CallEnd) {
	if cs == nil {
		return
	}
	if cs.span != nil {
		if end.Outcome != OutcomeOK {
			cs.span.SetAttributes(semconv.ErrorTypeKey.String(string(end.Outcome)))
			cs.span.SetStatus(codes.Error, redact.Line(end.Err.Error(), 300))
		}
		cs.span.SetAttributes(attrArgsBytes.Int(end.ArgsBytes), attrResultBytes.Int(end.ResultBytes))
		cs.span.End()
	}
	if cs.inst != nil {
		attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(c.Method)}
		if c.Method == "tools/call" {
			attrs = append(attrs, semconv.GenAIToolName(c.RemoteName))
		}
		if end.Outcome != OutcomeOK {
			attrs = append(attrs, semconv.ErrorTypeKey.String(string(end.Outcome)))
		}
		set := metric.WithAttributes(attrs...)
		ctx := context.Background()
		cs.inst.duration.Record(ctx, end.Duration.Seconds(), set)
		if end.Outcome != OutcomeOK {
			cs.inst.errors.Add(ctx, 1, set)
		}
	}
}

// connectSpan follows one server's start-up.
type connectSpan struct{ span trace.Span }

// startConnect starts the span of a server's start-up, or returns nil.
func (t *telemetry) startConnect(ctx context.Context, id string) (context.Context, *connectSpan) {
	if !t.active() {
		return ctx, nil
	}
	tr := t.tracer()
	if tr == nil {
		return ctx, nil
	}
	cs := &connectSpan{}
	ctx, cs.span = tr.Start(ctx, "connect "+id, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrServerID.String(id)))
	return ctx, cs
}

// phaseDone records that a start-up phase ended after d.
func (c *connectSpan) phaseDone(p Phase, d time.Duration) {
	if c == nil {
		return
	}
	c.span.AddEvent(string(p), trace.WithAttributes(attrPhase.String(string(p)), attrDuration.Float64(float64(d)/float64(time.Millisecond))))
}

// end ends the span: with the server's status on success, the failure otherwise.
func (c *connectSpan) end(s *Server, serr *ServerError) {
	if c == nil {
		return
	}
	if serr != nil {
		c.span.SetAttributes(attrPhase.String(string(serr.Phase)), semconv.ErrorTypeKey.String(string(serr.Phase)))
		c.span.SetStatus(codes.Error, redact.Line(serr.Error(), 300))
	} else if s != nil {
		c.span.SetAttributes(s.netAttrs()...)
		c.span.SetAttributes(attrTools.Int(len(s.Status().ModelTools)))
	}
	c.span.End()
}
