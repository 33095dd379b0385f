package bridge

import (
	"context"
	"time"

	"github.com/ttalk/mcpbridge/internal/redact"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/transport"
)

// OpenTelemetry (see "Tracing" in doc.go) is internal/telemetry: the API only; spans and
// metrics are recorded when a provider is installed, through Options or globally. This file
// gives its types the bridge's values (Call, CallEnd, Phase, ServerError, the server's
// status).

// telemetry is one Connect's view of OpenTelemetry.
type telemetry itel.Telemetry

func newTelemetry(o *Options) *telemetry {
	return (*telemetry)(itel.New(o.TracerProvider, o.MeterProvider, o.Propagator, moduleVersion()))
}

func (t *telemetry) itel() *itel.Telemetry { return (*itel.Telemetry)(t) }

// active reports whether spans or metrics are recorded now. Cheap: no allocation.
func (t *telemetry) active() bool { return t.itel().Active() }

// tracing reports whether spans are recorded now: only then does a request carry trace
// context and baggage. Cheap: no allocation.
func (t *telemetry) tracing() bool { return t.itel().Tracing() }

// inject adds ctx's trace context to meta (allocating it when needed) and returns it.
func (t *telemetry) inject(ctx context.Context, meta map[string]any) map[string]any {
	return t.itel().Inject(ctx, meta)
}

// callSpan is one call's span and instruments (nil when nothing is recorded).
type callSpan itel.CallSpan

// startCall starts the span of a call (when tracing) and returns ctx carrying it.
func (t *telemetry) startCall(ctx context.Context, s *Server, c *Call) (context.Context, *callSpan) {
	ctx, cs := t.itel().StartCall(ctx, itel.Call{Method: c.Method, Name: c.RemoteName, Server: s.cfg.ID, Origin: c.Origin.String()},
		func() itel.Net { return netOf(s) })
	return ctx, (*callSpan)(cs)
}

// target names what an exposed resource or prompt request is about, once the arguments
// are read.
func (cs *callSpan) target(method, prompt, uri string) {
	(*itel.CallSpan)(cs).Target(method, prompt, uri)
}

// endCall ends a call's span and records its metrics.
func (t *telemetry) endCall(cs *callSpan, c *Call, end *CallEnd) {
	if cs == nil {
		return
	}
	e := itel.End{ArgsBytes: end.ArgsBytes, ResultBytes: end.ResultBytes, Duration: end.Duration}
	if end.Outcome != OutcomeOK {
		e.ErrorType = string(end.Outcome)
		if end.Err != nil {
			e.Message = redact.Line(end.Err.Error(), 300)
		}
	}
	t.itel().EndCall((*itel.CallSpan)(cs), itel.Call{Method: c.Method, Name: c.RemoteName}, e)
}

// netOf describes how s is reached: protocol version and network transport.
func netOf(s *Server) itel.Net {
	st := s.Status()
	n := itel.Net{ProtocolVersion: st.ProtocolVersion}
	switch transport.Kind(st.Transport) {
	case transport.KindStdio:
		n.Transport = "pipe"
	case transport.KindHTTP, transport.KindSSE:
		n.Transport, n.Protocol = "tcp", "http"
	}
	return n
}

// sessionStarted records the session a call's request went out on.
func sessionStarted(ctx context.Context, id string) { itel.SessionStarted(ctx, id) }

// connectSpan follows one server's start-up (nil when not traced).
type connectSpan itel.ConnectSpan

// startConnect starts the span of a server's start-up, or returns nil.
func (t *telemetry) startConnect(ctx context.Context, id string) (context.Context, *connectSpan) {
	ctx, cs := t.itel().StartConnect(ctx, id)
	return ctx, (*connectSpan)(cs)
}

// phaseDone records that a start-up phase ended after d.
func (c *connectSpan) phaseDone(p Phase, d time.Duration) {
	(*itel.ConnectSpan)(c).PhaseDone(string(p), d)
}

// end ends the span: with the server's status on success, the failure otherwise.
func (c *connectSpan) end(s *Server, serr *ServerError) {
	cs := (*itel.ConnectSpan)(c)
	switch {
	case c == nil:
	case serr != nil:
		cs.Fail(string(serr.Phase), redact.Line(serr.Error(), 300))
	case s != nil:
		cs.End(func() itel.Net { return netOf(s) }, func() int { return len(s.Status().ModelTools) })
	default:
		cs.End(nil, nil)
	}
}
