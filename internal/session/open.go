package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/internal/wire"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/transport"
)

// The phases of the host's errors this package reports (Host.Fail); the host's Phase
// constants have the same names.
const (
	phaseConfig     = "config"
	phaseStart      = "start"
	phaseInitialize = "initialize"
	phaseList       = "tools/list"
)

// failure is a failed open before it becomes the host's error (Host.Fail).
type failure struct {
	phase string
	err   error
	conn  *transport.Conn
}

func (f *failure) stderr() string {
	if f.conn == nil {
		return ""
	}
	return f.conn.Stderr()
}

func (f *failure) host(p *Pool) error { return p.cfg.Host.Fail(f.phase, f.err, f.conn) }

// Open starts one shared session: spawn or dial, then initialize (negotiating the protocol
// version, protocol.go), trying Streamable HTTP before legacy SSE when the type is inferred
// from a URL. ctx bounds the start-up only; the session lives until it dies or the pool is
// closed. The session is not installed (Install). Host.Opened hears of each transport tried.
func (p *Pool) Open(ctx context.Context) (*Session, error) {
	sess, f := p.open(ctx)
	if f != nil {
		return nil, f.host(p)
	}
	return sess, nil
}

func (p *Pool) open(ctx context.Context) (*Session, *failure) {
	if p.cfg.ConfigErr != nil {
		return nil, &failure{phaseConfig, p.cfg.ConfigErr, nil}
	}
	kinds, err := transport.Kinds(p.cfg.Spec)
	if err == nil && p.cfg.OAuth != nil && (len(kinds) != 1 || kinds[0] != transport.KindHTTP) {
		if len(kinds) > 1 && kinds[0] == transport.KindHTTP {
			kinds = kinds[:1] // OAuth is Streamable HTTP only: no SSE fallback
		} else {
			err = errors.New("auth: OAuth needs a Streamable HTTP server (type http)")
		}
	}
	if err != nil {
		return nil, &failure{phaseConfig, err, nil}
	}
	if p.cfg.OAuth != nil {
		// One connection attempt: an interactive authorization that fails ends it.
		ctx = auth.WithAttempt(ctx)
	}
	var f *failure
	for i, k := range kinds {
		var sess *Session
		var fallback bool
		sess, fallback, f = p.openKind(ctx, k)
		if f == nil {
			p.proto.agreed(sess.CS.InitializeResult().ProtocolVersion)
			p.cfg.Host.Opened(k, sess)
			return sess, nil
		}
		p.cfg.Host.Opened(k, nil)
		if !fallback || i+1 == len(kinds) || ctx.Err() != nil {
			break
		}
		p.cfg.Log.Debug("streamable HTTP refused; trying legacy SSE", "err", f.err)
	}
	return nil, f
}

// openAttempt starts one session over kind k, offering protocol version pin ("" negotiates,
// with n observing server/discover).
func (p *Pool) openAttempt(ctx context.Context, k transport.Kind, pin string, n *negotiation) (*Session, bool, *failure) {
	conn, err := transport.Open(p.cfg.Spec, k)
	if err != nil {
		return nil, false, &failure{phaseConfig, err, nil}
	}
	var origin atomic.Pointer[Session] // the session, for its tasks' notifications
	p.watchTasks(conn, &origin)
	// The session's context must outlive start-up (the SSE transport reads its stream on it),
	// so ctx only cancels it until Connect returns.
	sctx, cancel := context.WithCancel(p.cfg.Life)
	sctx = auth.CopyAttempt(ctx, sctx)
	// When ctx ends first, what the server was doing then is noted before cancel lets
	// Connect tear the process down.
	var note string // startingNote(conn) when ctx ended; read after noted is closed
	noted := make(chan struct{})
	stopAfter := context.AfterFunc(ctx, func() {
		note = startingNote(conn)
		close(noted)
		cancel()
	})
	started := time.Now()
	// go-sdk's Connect closes the session when initialize fails, and that close waits for
	// the transport's teardown (seconds for a process that ignores stdin EOF). So Connect
	// runs on its own goroutine: when ctx ends first, the teardown finishes in the
	// background and ctx stays an upper bound on start-up.
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	initTap := &wire.Tap{Method: "initialize"} // the raw initialize result: the server's tasks capability
	n.installing = conn.Installing
	go func() {
		cs, err := p.cfg.Client.Connect(wire.WithTap(withNegotiation(sctx, n), initTap), conn.Transport(), sessionOptions(pin))
		done <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
	defer initTap.Done()
	select {
	case r := <-done:
		cs, err = r.cs, r.err
		if !stopAfter() {
			<-noted
			if err == nil {
				err = ctx.Err()
				_ = cs.Close()
			}
		}
	case <-ctx.Done():
		if stopAfter() {
			note = startingNote(conn)
		} else {
			<-noted
		}
		cancel()
		err = ctx.Err()
		p.Background(func() {
			if r := <-done; r.cs != nil {
				_ = r.cs.Close()
			}
			_ = conn.Close()
		})
		return nil, false, &failure{startPhase(conn), p.startErrNote(ctx, err, started, note), conn}
	}
	if err != nil {
		if over := conn.Overrun(); over != nil {
			err = fmt.Errorf("%w (Options.MaxMessageBytes)", over)
		}
		cancel()
		_ = conn.Close()
		return nil, k == transport.KindHTTP && conn.FallbackToSSE(), &failure{startPhase(conn), p.startErrNote(ctx, err, started, note), conn}
	}
	sess := p.newSession(cs, conn, cancel, started)
	sess.Kind = k
	ir := cs.InitializeResult()
	sess.Caps = tasks.ReadCaps(initTap.Result(), ir, ir.ProtocolVersion >= ModernVersion)
	origin.Store(sess)
	return sess, false, nil
}

// startPhase is the phase a failed start-up ended in: start until the process was started
// or the endpoint answered, initialize after.
func startPhase(conn *transport.Conn) string {
	if conn.Reached() {
		return phaseInitialize
	}
	return phaseStart
}

// StartErr explains a failed start-up or listing of a session started at started, naming a
// timeout or cancellation of ctx as such.
func (p *Pool) StartErr(ctx context.Context, err error, started time.Time) error {
	return p.startErrNote(ctx, err, started, "")
}

// startErrNote is StartErr with a note on what the server was doing when ctx timed out
// (startingNote).
func (p *Pool) startErrNote(ctx context.Context, err error, started time.Time, note string) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		if note != "" {
			note = " (" + note + ")"
		}
		return fmt.Errorf("timed out after %s%s: %w", time.Since(started).Round(time.Millisecond), note, context.DeadlineExceeded)
	case ctx.Err() != nil:
		return fmt.Errorf("canceled: %w", ctx.Err())
	case p.cfg.Life.Err() != nil:
		return ErrClosed
	}
	return err
}

// startingNote says what a stdio server whose start-up is timing out is doing: npx still
// installing the package (transport.Conn.Installing), or running without having answered;
// "" when its process is not running (or for http and sse).
func startingNote(conn *transport.Conn) string {
	switch {
	case conn.Installing():
		return "npx is still installing the package"
	case conn.Running():
		return "still starting, or not answering"
	}
	return ""
}
