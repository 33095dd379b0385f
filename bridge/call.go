package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/results"
)

// invoke is a Tool's Handler: arguments checked and validated, tools/call with redial,
// result flattened.
func (s *Server) invoke(ctx context.Context, remote string, args json.RawMessage) (string, error) {
	rt, err := s.remoteTool(remote)
	if err != nil {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	a, err := normalizeArgs(args)
	if sch := rt.validator.get(); err == nil && sch != nil {
		err = validateArgs(sch, a)
	}
	if err != nil {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", rt.label, err)}
	}
	res, err := s.callTool(ctx, rt, a)
	if err != nil {
		return "", err
	}
	if sch := rt.outValidator.get(); sch != nil && res.StructuredContent != nil && !res.IsError {
		if verr := sch.Validate(toSchemaValue(res.StructuredContent)); verr != nil {
			s.log.Warn("structuredContent does not match the tool's outputSchema", "tool", remote, "err", oneLine(verr.Error()))
		}
	}
	text, terr := results.Flatten(res, &results.Options{MaxBytes: s.opts.MaxResultBytes, App: rt.ui.ResourceURI != ""})
	if rt.ui.ResourceURI != "" && s.opts.OnAppResult != nil {
		s.opts.OnAppResult(ctx, apps.Activity{
			Result:      res,
			ResourceURI: rt.ui.ResourceURI,
			ServerHash:  s.Hash(),
			ServerID:    s.cfg.ID,
			ToolInput:   a,
		})
	}
	return text, terr
}

// toSchemaValue converts go-sdk's decoded value (float64 numbers) into what the schema
// validator expects (json.Number), by a round trip.
func toSchemaValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

// remoteTool returns the listed tool name; the error wraps ErrUnknownTool or ErrToolGone.
func (s *Server) remoteTool(name string) (*remoteTool, error) {
	s.mu.Lock()
	rt := s.remote[name]
	s.mu.Unlock()
	switch {
	case rt == nil:
		return nil, fmt.Errorf("tool %q: %w", name, ErrUnknownTool)
	case rt.gone:
		return nil, fmt.Errorf("tool %q: %w", name, ErrToolGone)
	}
	return rt, nil
}

func (s *Server) gone(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.remote[name]
	return rt != nil && rt.gone
}

// CallTool calls the server's tool `name` (its own name, not the model-visible one) with args
// as given (nil means {}), and returns the raw result: no validation, no flattening. A result
// with IsError is not a Go error. Timeouts and redials work as for a Handler.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	rt, err := s.remoteTool(name)
	if err != nil {
		// Not in the listing (filtered, or new): still let the server answer.
		rt = newRemoteTool(&mcp.Tool{Name: name})
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	return s.callTool(ctx, rt, args)
}

func (s *Server) callTool(ctx context.Context, rt *remoteTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := s.do(ctx, PhaseCall, rt.label, rt.retryable(), func(ctx context.Context, sess *session) error {
		if s.gone(rt.name) {
			return ErrToolGone
		}
		params := &mcp.CallToolParams{Name: rt.name, Arguments: args}
		if fn := progressFunc(ctx); fn != nil {
			tok, done := s.progress.register(rt.name, fn)
			defer done()
			params.SetProgressToken(tok)
		}
		var err error
		res, err = sess.cs.CallTool(ctx, params)
		return err
	})
	return res, err
}

// ReadResource reads a resource (for MCP Apps, the ui:// HTML) from the server. With
// Options.UIResourceCacheTTL set, ui:// results are served from a small per-server cache
// (emptied when the session is redialled); callers must not modify a returned result.
func (s *Server) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if res := s.cachedUI(uri); res != nil {
		return res, nil
	}
	var res *mcp.ReadResourceResult
	err := s.do(ctx, PhaseRead, fmt.Sprintf("resource %q", uri), true, func(ctx context.Context, sess *session) error {
		var err error
		res, err = sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	if err == nil {
		s.cacheUI(uri, res)
	}
	return res, err
}

// Ping checks that the server answers.
func (s *Server) Ping(ctx context.Context) error {
	return s.do(ctx, PhasePing, "ping", true, func(ctx context.Context, sess *session) error {
		return sess.cs.Ping(ctx, nil)
	})
}

// do runs one request on the live session, redialling a dead session first. When the
// session dies during the request, the request is sent again on a new session only if it
// cannot have reached the server or retryable says sending it twice is harmless.
func (s *Server) do(ctx context.Context, phase Phase, what string, retryable bool, fn func(context.Context, *session) error) error {
	timeout := s.opts.callTimeout(s.cfg)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	for attempt := 0; ; attempt++ {
		sess, err := s.session(ctx)
		if err != nil {
			return s.requestErr(ctx, phase, what, timeout, err)
		}
		err = fn(ctx, sess)
		if err == nil {
			s.healthy()
			return nil
		}
		if ctx.Err() != nil {
			return s.requestErr(ctx, phase, what, timeout, err)
		}
		if !sessionDead(err, sess) {
			return &ServerError{Server: s.cfg.ID, Phase: phase, Err: fmt.Errorf("%s: %w", what, err)}
		}
		s.died(sess, err)
		if attempt == 0 && (notSent(err) || retryable) {
			s.log.Debug("session lost; retrying on a new session", "request", what, "err", err)
			continue
		}
		if !notSent(err) {
			err = fmt.Errorf("%s: the session ended during the request, so it may have run on the server; not retried: %w", what, err)
		} else {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return &ServerError{Server: s.cfg.ID, Phase: phase, Err: err, Stderr: sess.conn.Stderr()}
	}
}

func (s *Server) requestErr(ctx context.Context, phase Phase, what string, timeout time.Duration, err error) error {
	switch {
	case s.life.Err() != nil:
		err = fmt.Errorf("%s: %w", what, errServerClosed)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s: no answer within %s: %w", what, timeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		err = fmt.Errorf("%s: %w", what, ctx.Err())
	default:
		var se *ServerError
		if errors.As(err, &se) {
			return se
		}
		err = fmt.Errorf("%s: %w", what, err)
	}
	return &ServerError{Server: s.cfg.ID, Phase: phase, Err: err}
}

// sessionDead reports whether err means the session cannot be used any more.
func sessionDead(err error, sess *session) bool {
	select {
	case <-sess.dead:
		return true
	default:
	}
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "exceeded the configured maximum line length") || writeFailed(err)
}

// writeFailed reports whether err is a failure to write the request to a stdio pipe (the
// process is gone, or the pipe was closed): the request never reached the server, and
// the pipe is broken for good.
func writeFailed(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write"
}

// notSent reports whether a failed request cannot have reached the server: the connection
// was already closing, or the server refused the session before handling it.
func notSent(err error) bool {
	return (errors.Is(err, mcp.ErrConnectionClosed) && strings.Contains(err.Error(), "client is closing")) ||
		errors.Is(err, mcp.ErrSessionMissing) || writeFailed(err)
}

// redialCall is one redial, shared by every caller that needs the session meanwhile.
type redialCall struct {
	done chan struct{} // closed when the redial ended
	err  error         // its outcome; valid once done is closed
}

// session returns the live session, redialling (once, shared by concurrent callers) when
// it died. A server that keeps failing is redialled with exponential backoff; within the
// backoff window callers get the last error at once rather than waiting. The redial runs
// on its own goroutine, bounded by the connect timeout and by Close, so that a caller
// whose ctx ends first returns at once.
func (s *Server) session(ctx context.Context) (*session, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, errServerClosed
		}
		if sess := s.sess; sess != nil {
			select {
			case <-sess.dead:
				s.sess = nil
				s.failures++
				s.lastErr = errors.New("the session ended")
				s.background(func() { _ = sess.close() })
			default:
				s.mu.Unlock()
				return sess, nil
			}
		}
		rc := s.redialing
		if rc == nil {
			if wait := backoff(s.failures); time.Since(s.lastDial) < wait {
				left := wait - time.Since(s.lastDial)
				err := fmt.Errorf("server is down; next reconnect allowed in %s (after %d failures, last: %v)", left.Round(time.Millisecond), s.failures, s.lastErr)
				s.mu.Unlock()
				return nil, err
			}
			rc = &redialCall{done: make(chan struct{})}
			s.redialing = rc
			s.lastDial = time.Now()
			s.background(func() { s.runRedial(rc) })
		}
		s.mu.Unlock()
		select {
		case <-rc.done:
			if rc.err != nil {
				return nil, rc.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Server) runRedial(rc *redialCall) {
	err := s.redial()
	s.mu.Lock()
	s.redialing = nil
	if err != nil {
		s.failures++
		s.lastErr = err
	}
	rc.err = err
	s.mu.Unlock()
	close(rc.done)
}

func backoff(failures int) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := firstBackoff
	for i := 2; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// redial opens a new session and re-lists tools, bounded by the connect timeout and by Close.
func (s *Server) redial() error {
	ctx, cancel := context.WithTimeout(s.life, s.opts.connectTimeout(s.cfg))
	defer cancel()
	s.log.Info("reconnecting")
	sess, _, serr := s.open(ctx)
	if serr != nil {
		s.log.Warn("reconnect failed", "phase", serr.Phase, "err", serr.Err, "stderr", tail(serr.Stderr))
		return serr
	}
	listed, raw, err := s.list(ctx, sess)
	if err != nil {
		s.closeWithin(ctx, sess)
		serr = s.serverError(PhaseList, err, sess.conn)
		s.log.Warn("reconnect failed", "phase", serr.Phase, "err", serr.Err)
		return serr
	}
	s.install(sess, listed, raw)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		_ = sess.close()
		return errServerClosed
	}
	return nil
}

// healthy resets the crash-loop backoff after a request succeeded.
func (s *Server) healthy() {
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
}

// died retires sess after a request found it dead.
func (s *Server) died(sess *session, cause error) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
		s.failures++
		s.lastErr = cause
		s.background(func() { _ = sess.close() })
	}
	s.mu.Unlock()
	s.log.Warn("session lost", "err", cause, "stderr", tail(sess.conn.Stderr()))
}

func tail(s string) string {
	if len(s) > stderrLogTail {
		s = s[len(s)-stderrLogTail:]
	}
	return s
}

// closeWithin closes sess, waiting for the teardown no longer than ctx allows; the rest of
// it runs in the background (Close waits for it).
func (s *Server) closeWithin(ctx context.Context, sess *session) {
	done := make(chan struct{})
	s.background(func() {
		_ = sess.close()
		close(done)
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// background runs f, a teardown or a redial, on its own goroutine. Close waits for such
// work (bounded), so that no process the server started outlives Close.
func (s *Server) background(f func()) {
	s.bgMu.Lock()
	s.bgN++
	s.bgMu.Unlock()
	go func() {
		defer func() {
			s.bgMu.Lock()
			s.bgN--
			if s.bgN == 0 && s.bgIdle != nil {
				close(s.bgIdle)
				s.bgIdle = nil
			}
			s.bgMu.Unlock()
		}()
		f()
	}()
}

// waitBackground waits until no background work runs, or d passed.
func (s *Server) waitBackground(d time.Duration) {
	s.bgMu.Lock()
	if s.bgN == 0 {
		s.bgMu.Unlock()
		return
	}
	if s.bgIdle == nil {
		s.bgIdle = make(chan struct{})
	}
	idle := s.bgIdle
	s.bgMu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// close ends the session: the transport's teardown (bounded) and go-sdk's own Close, which
// can block on requests still in flight, so it is bounded here as well.
func (sess *session) close() error {
	sess.closeOnce.Do(func() {
		done := make(chan error, 1)
		go func() { done <- sess.cs.Close() }()
		err := sess.conn.Close()
		sess.cancel()
		select {
		case <-done:
		case <-time.After(sessionClose):
		}
		sess.closeErr = err
	})
	return sess.closeErr
}

// Close ends the server: in-flight calls are cancelled, the session is closed and a stdio
// process (with its whole process group) is terminated. Close is bounded in time and
// idempotent; later calls fail with "server closed".
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		sess := s.sess
		s.sess = nil
		s.mu.Unlock()
		s.stop()
		// Teardowns of dead sessions and an interrupted redial finish alongside.
		var wg sync.WaitGroup
		wg.Go(func() { s.waitBackground(sessionClose) })
		if sess != nil {
			if err := sess.close(); err != nil {
				s.closeErr = &ServerError{Server: s.cfg.ID, Phase: PhaseClose, Err: err}
			}
		}
		wg.Wait()
	})
	return s.closeErr
}
