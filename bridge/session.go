package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// Sessions: the live MCP session of a Server, redial with backoff when it dies, retry rules,
// and the background work (teardowns, redials) Close waits for. Fields are guarded by
// Server.mu (see the lock order on Server).

// session is one MCP session over one transport connection.
type session struct {
	cs      *mcp.ClientSession
	conn    *transport.Conn
	cancel  context.CancelFunc // ends the session's context (the SSE GET stream lives on it)
	dead    chan struct{}      // closed when the session ended, for whatever reason
	started time.Time
	// taskCaps is what the server offers for MCP tasks (internal/tasks).
	taskCaps taskCaps

	path callPath // how tools/call goes on this session (callpath.go)
	// shared and userOAuth are set on a user's view of a stateless server's shared session
	// (users_stateless.go): its tools/call go direct with userOAuth's token.
	shared    *session
	userOAuth *auth.Handler

	closeOnce sync.Once
	closeErr  error
}

// do runs one request on the live session, redialling a dead session first. When the
// session dies during the request, the request is sent again on a new session only if it
// cannot have reached the server or retryable says sending it twice is harmless.
func (s *Server) do(ctx context.Context, phase Phase, what string, retryable bool, fn func(context.Context, *session) error) error {
	return s.doBounded(ctx, false, phase, what, retryable, fn)
}

// doBounded is do; bounded says ctx is already bounded by the call timeout (started no
// later than here) and by Close, so that do need not bound it again.
func (s *Server) doBounded(ctx context.Context, bounded bool, phase Phase, what string, retryable bool, fn func(context.Context, *session) error) error {
	return s.doWithin(ctx, s.opts.callTimeout(s.cfg), bounded, phase, what, retryable, fn)
}

// doWithin is doBounded with the request bounded by timeout rather than the call timeout
// (an MCP task's tasks/result, which blocks while the task runs).
func (s *Server) doWithin(ctx context.Context, timeout time.Duration, bounded bool, phase Phase, what string, retryable bool, fn func(context.Context, *session) error) (err error) {
	// The server's text may quote a secret it was sent.
	defer func() { err = s.secrets.maskErr(ctx, err) }()
	if !bounded {
		var release func()
		ctx, release = wire.Bound(ctx, s.life, timeout)
		defer release()
	}
	for attempt := 0; ; attempt++ {
		sess, release, err := s.sessionFor(ctx)
		if err != nil {
			return s.requestErr(ctx, phase, what, timeout, err)
		}
		err = fn(ctx, sess)
		release()
		if user, ok := UserFromContext(ctx); ok && err != nil {
			err = s.userErr(user, err)
		}
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
		err = overrunErr(err, sess)
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

// send is a call's tools/call on the live session (see do: redial, retry rules), with
// WithCallMeta's _meta and the trace context, the session in the span, and a progress
// token when the caller asked for progress. ctx carries the call's deadline and Close (set
// once, call.go); each request of a task-bounded call is bounded by o.timeout within it
// (see sendOptions).
func (s *Server) send(ctx context.Context, rt *remoteTool, args json.RawMessage, o sendOptions) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	var task *taskRun // the task the server created instead of answering (tasks.go)
	err := s.doWithin(s.markToolsCall(ctx, rt), o.timeout, !o.taskBounded, PhaseCall, rt.label, rt.retryable(), func(ctx context.Context, sess *session) error {
		if s.gone(rt.name) {
			return ErrToolGone
		}
		params := &mcp.CallToolParams{Name: rt.name, Arguments: args}
		if meta := requestMeta(ctx, s.opts.tel); meta != nil {
			params.Meta = meta
		}
		sessionStarted(ctx, sess.cs.ID())
		if fn := progressFunc(ctx); fn != nil {
			tok, done := s.progress.register(rt.name, fn)
			defer done()
			params.SetProgressToken(tok)
		}
		var err error
		res, task, err = s.sendCall(ctx, sess, rt, params, false, o.shared)
		return err
	})
	if err == nil && task != nil {
		return task.await(ctx, o.taskTimeout)
	}
	return res, err
}

func (s *Server) requestErr(ctx context.Context, phase Phase, what string, timeout time.Duration, err error) error {
	switch {
	case s.life.Err() != nil:
		err = fmt.Errorf("%s: %w", what, ErrServerClosed)
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
	return sess.conn.Overrun() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, transport.ErrFrameTooLarge) || sdkFrameTooLarge(err) || writeFailed(err) || readClosed(err)
}

// readClosed reports whether err is a read from a pipe that was closed ("read |0: file
// already closed"): the session cannot read another answer.
func readClosed(err error) bool {
	var pe *fs.PathError
	return errors.Is(err, os.ErrClosed) || (errors.As(err, &pe) && pe.Op == "read") ||
		strings.Contains(err.Error(), "file already closed")
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
	return (errors.Is(err, mcp.ErrConnectionClosed) && sdkClientClosing(err)) ||
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
			return nil, ErrServerClosed
		}
		if sess := s.sess; sess != nil {
			select {
			case <-sess.dead:
				s.sess = nil
				s.failures++
				s.failing.Store(true)
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
		s.failing.Store(true)
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
	s.install(ctx, sess, listed, raw)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		_ = sess.close()
		return ErrServerClosed
	}
	return nil
}

// healthy resets the crash-loop backoff after a request succeeded.
func (s *Server) healthy() {
	if !s.failing.Load() { // the common case: nothing to reset, no lock taken
		return
	}
	s.mu.Lock()
	s.failures = 0
	s.failing.Store(false)
	s.mu.Unlock()
}

// died retires sess after a request found it dead.
func (s *Server) died(sess *session, cause error) {
	if sess.shared != nil {
		sess = sess.shared
	}
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
		s.failures++
		s.failing.Store(true)
		s.lastErr = cause
		s.background(func() { _ = sess.close() })
	}
	s.mu.Unlock()
	s.retireUserSession(sess)
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
