package bridge

import (
	"context"
	"time"

	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/session"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/transport"
)

// Dial connects to one server and lists its tools, which keep their names unless invalid
// (or Prefix/AlwaysPrefix asks for a prefix). ctx bounds start-up only. The error is a
// *ServerError. Close the Server when done.
func Dial(ctx context.Context, cfg ServerConfig, opts *Options) (*Server, error) {
	if err := config.CheckIDs([]ServerConfig{cfg}); err != nil {
		return nil, &ServerError{Server: cfg.ID, Phase: PhaseConfig, Err: err}
	}
	s, serr := dial(ctx, cfg, resolve(opts), nil, 0)
	if serr != nil {
		return nil, serr
	}
	s.build(catalog.NewNamer())
	return s, nil
}

// dial starts one server of set (nil for Dial) and lists its tools, reporting the outcome to
// the log and OnStatus; attempt counts the retries of a start-up the token store failed (Set).
func dial(ctx context.Context, cfg ServerConfig, o *options, set *Set, attempt int) (*Server, *ServerError) {
	ctx, span := o.tel.StartConnect(ctx, cfg.ID)
	statusCtx := ctx // for OnStatus: without the connect timeout set below
	fail := func(s *Server, serr *ServerError, timings []PhaseTiming) (*Server, *ServerError) {
		if s != nil {
			// The server's text (an error message, its stderr) may quote a secret.
			serr = s.secrets.maskErr(ctx, serr).(*ServerError)
		}
		endConnect(span, nil, serr)
		st := ServerStatus{ID: cfg.ID}
		if s != nil {
			s.stop()
			if set != nil {
				set.failedToStart(s)
			}
			s.catMu.Lock()
			s.status.Err = serr
			s.status.Timings = timings
			s.status.Stderr = serr.Stderr
			st = s.status
			s.catMu.Unlock()
		} else {
			st.Err = serr
		}
		attrs := []any{"server", cfg.ID, "phase", serr.Phase, "err", serr.Err}
		if serr.Stderr != "" {
			attrs = append(attrs, "stderr", serr.Stderr[max(0, len(serr.Stderr)-stderrLogTail):]) // the tail
		}
		if attempt > 0 && (statusCtx.Err() != nil || attempt < session.MaxStoreRetries && session.StoreOnly(serr)) {
			return nil, serr // the store still fails (logged at Connect), or Close ended the retries
		}
		st.Retries = attempt
		o.logger.Warn("mcp server skipped", attrs...)
		if o.OnStatus != nil {
			o.OnStatus(statusCtx, st)
		}
		return nil, serr
	}
	if err := config.Validate(cfg); err != nil {
		return fail(nil, &ServerError{Server: cfg.ID, Phase: PhaseConfig, Err: err}, nil)
	}
	s := newServer(cfg, o, set)
	ctx, cancel := context.WithTimeout(ctx, o.connectTimeout(cfg))
	defer cancel()
	started := time.Now()
	sess, err := s.pool.Open(ctx) // internal/session
	initTiming := PhaseTiming{PhaseInitialize, time.Since(started)}
	var serr *ServerError
	if err != nil {
		serr = err.(*ServerError) // the pool's errors are the server's (newPool)
	}
	if serr != nil && s.usersOnly(serr) {
		// Only a user's grant opens the server: no shared session (users_catalogue.go).
		set.rejoined(s, attempt)
		endConnect(span, s, nil)
		if o.OnStatus != nil {
			o.OnStatus(statusCtx, s.Status())
		}
		return s, nil
	}
	if serr != nil {
		return fail(s, serr, nil)
	}
	timings := []PhaseTiming{initTiming}
	span.PhaseDone(string(initTiming.Phase), initTiming.Duration)
	t := time.Now()
	listed, raw, err := s.list(ctx, sess)
	timings = append(timings, PhaseTiming{PhaseList, time.Since(t)})
	span.PhaseDone(string(PhaseList), time.Since(t))
	if err != nil {
		s.pool.Discard(ctx, sess)
		return fail(s, s.serverError(PhaseList, err, sess.Conn), timings)
	}
	s.install(ctx, sess, listed, raw)
	s.pool.Ready(sess)           // the held listen is written soon; the backoff counts from now
	discoverSkills(ctx, s, sess) // skills.go: metadata only, at assembly
	set.rejoined(s, attempt)
	as := s.oauth.Probe()
	s.catMu.Lock()
	s.status.Timings = timings
	s.status.Auth = as
	st := s.status
	s.catMu.Unlock()
	endConnect(span, s, nil)
	s.log.Debug("mcp server connected", "tools", len(st.ModelTools), "transport", st.Transport)
	if o.OnStatus != nil {
		o.OnStatus(statusCtx, st)
	}
	return s, nil
}

// netOf describes how s is reached, for its spans: protocol version and network transport.
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

// endConnect ends the span of a server's start-up (nil when not traced): with the server's
// status on success, the failure otherwise.
func endConnect(cs *itel.ConnectSpan, s *Server, serr *ServerError) {
	switch {
	case cs == nil:
	case serr != nil:
		cs.Fail(string(serr.Phase), serr)
	case s != nil:
		cs.End(func() itel.Net { return netOf(s) }, func() int { return len(s.Status().ModelTools) })
	default:
		cs.End(nil, nil)
	}
}
