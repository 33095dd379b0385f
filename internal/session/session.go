package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/transport"
)

// ErrClosed is the cause of every request made after the pool was closed.
var ErrClosed = errors.New("server closed")

// Session is one MCP session over one transport connection.
type Session struct {
	CS      *mcp.ClientSession
	Conn    *transport.Conn
	Started time.Time
	Kind    transport.Kind // the transport it runs over
	// Negotiation says how the protocol version was reached (ServerStatus.Negotiation).
	Negotiation string
	// Caps is what the server offers for MCP tasks (zero on a user's view of the shared
	// session, users.go: its calls never become tasks).
	Caps tasks.Caps

	cancel context.CancelFunc // ends the session's context (the SSE GET stream lives on it)
	dead   chan struct{}      // closed when the session ended, for whatever reason
	pool   *Pool

	slot *slot    // the user's slot of a user's own session (users.go); nil: the shared one
	path callPath // how tools/call goes on this session (callpath.go)
	// shared, user and userOAuth are set on a user's view of a stateless server's shared
	// session (users.go): its tools/call go direct with userOAuth's token.
	shared    *Session
	user      string
	userOAuth *auth.Handler

	taskListens atomic.Int32 // task subscriptions open (ListenTasks)

	closeOnce sync.Once
	closeErr  error
}

// newSession wraps a connected go-sdk session; dead closes when it ends.
func (p *Pool) newSession(cs *mcp.ClientSession, conn *transport.Conn, cancel context.CancelFunc, started time.Time) *Session {
	sess := &Session{CS: cs, Conn: conn, cancel: cancel, dead: make(chan struct{}), Started: started, pool: p}
	go func() {
		err := cs.Wait()
		close(sess.dead)
		if conn != nil {
			conn.Direct().End(err) // direct calls in flight on a stateful HTTP session end with it
		}
	}()
	return sess
}

// TaskFlavour is the task protocol sess speaks.
func (sess *Session) TaskFlavour() tasks.Flavour {
	if sess.Caps.Extension || sess.CS.InitializeResult().ProtocolVersion >= ModernVersion {
		return tasks.FlavourExt
	}
	return tasks.Flavour2025
}

// Dead is closed when the session has ended.
func (sess *Session) Dead() <-chan struct{} { return sess.dead }

// Close ends the session: the transport's teardown (bounded) and go-sdk's own Close, which
// can block on requests still in flight, so it is bounded here as well.
func (sess *Session) Close() error {
	sess.closeOnce.Do(func() {
		done := make(chan error, 1)
		go func() { done <- sess.CS.Close() }()
		err := sess.Conn.Close()
		sess.cancel()
		select {
		case <-done:
		case <-time.After(sess.pool.cfg.Limits.CloseWait):
		}
		sess.closeErr = err
	})
	return sess.closeErr
}

// OverrunErr explains a request on sess that failed because the server sent a message over
// the per-message budget, or returns err when it did not.
func OverrunErr(err error, sess *Session) error {
	if over := sess.Conn.Overrun(); over != nil {
		return fmt.Errorf("%w (Options.MaxMessageBytes); the session was dropped", over)
	}
	return err
}

// IsDead reports whether err, from a request on sess, means sess cannot be used any more.
func IsDead(err error, sess *Session) bool {
	select {
	case <-sess.dead:
		return true
	default:
	}
	return sess.Conn.Overrun() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
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

// Behaviour of go-sdk that can only be recognised by an error's text or code, each pinned by
// a test against the real dependency (deptext_test.go).

// sdkFrameTooLarge reports go-sdk's stdio error for an inbound line over MaxLineLength
// (mcp.errFrameTooLarge, unexported): the stream cannot be resynchronised, the session is dead.
func sdkFrameTooLarge(err error) bool {
	return strings.Contains(err.Error(), "exceeded the configured maximum line length")
}

// sdkClientClosing reports go-sdk's answer to a request made while its connection was
// closing (jsonrpc2.ErrClientClosing, code -32003, internal): the request was never sent.
func sdkClientClosing(err error) bool {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == -32003 {
		return true
	}
	return strings.Contains(err.Error(), "client is closing")
}
