package bridge

import (
	"context"

	"github.com/ttalk/mcpbridge/internal/redact"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/transport"
)

// OpenTelemetry (see "Tracing" in doc.go) is internal/telemetry: the API only; spans and
// metrics are recorded when a provider is installed, through Options or globally. This file
// gives its types the bridge's values (Call, CallEnd, Phase, ServerError, the server's
// status).

// newTelemetry returns one Connect's view of OpenTelemetry.
func newTelemetry(o *Options) *itel.Telemetry {
	return itel.New(o.TracerProvider, o.MeterProvider, o.Propagator, moduleVersion())
}

// startCall starts the span of a call (when tracing) and returns ctx carrying it; the span
// (its instruments) is nil when nothing is recorded.
func startCall(ctx context.Context, t *itel.Telemetry, s *Server, c *Call) (context.Context, *itel.CallSpan) {
	return t.StartCall(ctx, itel.Call{Method: c.Method, Name: c.RemoteName, Server: s.cfg.ID, Origin: c.Origin.String()},
		func() itel.Net { return netOf(s) })
}

// endCall ends a call's span and records its metrics.
func endCall(t *itel.Telemetry, cs *itel.CallSpan, c *Call, end *CallEnd) {
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
	t.EndCall(cs, itel.Call{Method: c.Method, Name: c.RemoteName}, e)
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

// endConnect ends the span of a server's start-up (nil when not traced): with the server's
// status on success, the failure otherwise.
func endConnect(cs *itel.ConnectSpan, s *Server, serr *ServerError) {
	switch {
	case cs == nil:
	case serr != nil:
		cs.Fail(string(serr.Phase), redact.Line(serr.Error(), 300))
	case s != nil:
		cs.End(func() itel.Net { return netOf(s) }, func() int { return len(s.Status().ModelTools) })
	default:
		cs.End(nil, nil)
	}
}
