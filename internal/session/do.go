package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// Request says what Do sends.
type Request struct {
	Phase string // the host's phase of the request (a tools/call, resources/read, …)
	What  string // names it in errors: `tool "x"`, "ping"
	// Retryable says sending the request twice is harmless (a read-only or idempotent tool,
	// a read): it may be sent again on a new session after the session died during it.
	Retryable bool
	// Timeout is the bound the caller put on ctx (with the server's close), named in a
	// timeout's error. Do sets no deadline of its own.
	Timeout time.Duration
	// Direct, set on a tools/call of a per-user server, reports whether the call may go on
	// shared, a stateless server's shared session, with the user's token (users.go): it
	// cannot become an MCP task there.
	Direct func(shared *Session) bool
}

// Do runs fn with the session the request goes on (Get: the shared one, or the user's that
// ctx names), redialling a dead session first. The rule of retries, stated once: when the
// session dies during the request, the request is sent again on a new session only if it
// cannot have reached the server or req.Retryable says sending it twice is harmless.
//
// ctx must already be bounded (the call's deadline and the server's close); errors are the
// host's (Host.Fail).
func (p *Pool) Do(ctx context.Context, req Request, fn func(context.Context, *Session) error) error {
	for attempt := 0; ; attempt++ {
		actx, note := ctx, (*auth.RefreshNote)(nil)
		if p.cfg.OAuth != nil || p.cfg.PerUser { // why a wait for a grant's refresh ended the request
			actx, note = auth.WithRefreshNote(ctx)
		}
		sess, release, err := p.get(actx, &req)
		if err != nil {
			return p.requestErr(ctx, &req, noted(err, note))
		}
		fctx, delivery := actx, (*wire.Delivery)(nil)
		if sess.Kind == transport.KindHTTP { // only a Streamable HTTP session fails after a POST was taken
			fctx, delivery = wire.WithDelivery(actx)
		}
		err = noted(fn(fctx, sess), note)
		release()
		if user, ok := User(ctx); ok && err != nil {
			err = p.userErr(user, err)
		}
		if err == nil {
			p.healthy(sess)
			return nil
		}
		if ctx.Err() != nil {
			return p.requestErr(ctx, &req, err)
		}
		if !IsDead(err, sess) {
			return p.cfg.Host.Fail(req.Phase, fmt.Errorf("%s: %w", req.What, err), nil)
		}
		err = OverrunErr(err, sess)
		p.died(sess, err)
		// Not sent: the connection says so, and no POST of it was taken by the server (an
		// HTTP session can fail with "session not found" after the server ran the request).
		unsent := notSent(err) && !delivery.Taken()
		if attempt == 0 && (unsent || req.Retryable) {
			p.cfg.Log.Debug("session lost; retrying on a new session", "request", req.What, "err", err)
			continue
		}
		if !unsent {
			err = fmt.Errorf("%s: the session ended during the request, so it may have run on the server; not retried: %w", req.What, err)
		} else {
			err = fmt.Errorf("%s: %w", req.What, err)
		}
		return p.cfg.Host.Fail(req.Phase, err, sess.Conn)
	}
}

// noted is err, or the *auth.RefreshWaitError note holds when err is the request's
// context's end that the wait for a grant's refresh gave up at.
func noted(err error, note *auth.RefreshNote) error {
	if rw := note.Err(); rw != nil && err != nil && !errors.As(err, new(*auth.RefreshWaitError)) {
		return rw
	}
	return err
}

// RequestErr is the error of a request (phase, what) bounded by timeout that got no session,
// or whose ctx ended with err.
func (p *Pool) RequestErr(ctx context.Context, phase, what string, timeout time.Duration, err error) error {
	return p.requestErr(ctx, &Request{Phase: phase, What: what, Timeout: timeout}, err)
}

func (p *Pool) requestErr(ctx context.Context, req *Request, err error) error {
	switch {
	case p.cfg.Life.Err() != nil:
		err = fmt.Errorf("%s: %w", req.What, ErrClosed)
	case errors.As(err, new(*auth.RefreshWaitError)): // says why ctx's end came first
		err = fmt.Errorf("%s: %w", req.What, err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && wire.CallersDeadline(ctx):
		err = fmt.Errorf("%s: the caller's context ended before an answer: %w", req.What, context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s: no answer within %s: %w", req.What, req.Timeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		err = fmt.Errorf("%s: %w", req.What, ctx.Err())
	default:
		if f := p.cfg.Host.AsFail(err); f != nil {
			return f
		}
		err = fmt.Errorf("%s: %w", req.What, err)
	}
	return p.cfg.Host.Fail(req.Phase, err, nil)
}

// Get returns the session a request of user ("" for none) goes on: the user's own on a
// per-user server, else the shared one, opened or redialled first when needed. release
// ends the request's use of it (a user's session is not dropped while in use).
func (p *Pool) Get(ctx context.Context, user string) (sess *Session, release func(), err error) {
	if user != "" {
		ctx = WithUser(ctx, user)
	}
	return p.get(ctx, &Request{})
}

// get is Get for the user ctx names (WithUser).
func (p *Pool) get(ctx context.Context, req *Request) (sess *Session, release func(), err error) {
	user, ok := User(ctx)
	if !p.cfg.PerUser {
		if ok {
			if err := p.cfg.Host.ValidUser(user); err != nil {
				return nil, nil, err
			}
		}
		sess, err = p.Shared(ctx)
		return sess, func() {}, err
	}
	if !ok {
		if p.cfg.ServeUsers {
			return nil, nil, ErrNoUser
		}
		sess, err = p.Shared(ctx)
		return sess, func() {}, err
	}
	if err := p.cfg.Host.ValidUser(user); err != nil {
		return nil, nil, err
	}
	if req.Direct != nil {
		// A stateless server: the call goes on the shared connection with the user's token.
		if view, release, ok, err := p.userView(ctx, user, req.Direct); ok || err != nil {
			return view, release, err
		}
	}
	return p.userSession(ctx, user)
}
