package session

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Holding subscriptions/listen while a set starts. On 2026-07-28 go-sdk's Connect sends
// subscriptions/listen (the stream tools/list_changed arrives on) right after
// server/discover, before the tools are listed. It adds about half again to what the whole
// start of a go-sdk server costs client and server (in process: 0.4 ms on top of 0.8), and
// when a set starts many servers at once on few cores every server's listen delays
// every other server's start, and Connect with them. So while Connect assembles more
// than one server, a session's listen is held (go-sdk is answered with an empty result; the
// request is not written) and written Limits.ListenHold after the server's own listing, in the
// background: by then a set of local servers has started, and following changes begins
// well before a model is likely to have made its first call. The specification's tools
// message flow has the same order (tools/list, then subscriptions/listen).
//
// A change made between the listing and the subscription would be missed, since a server
// notifies only subscribers. So the acknowledgement of a held listen counts as a
// list_changed: the server is re-listed once, in the background, and a change found then
// reaches OnToolsChanged like any other. Dial, redials and per-user sessions do not hold:
// there go-sdk's order stands.

const (
	methodListen    = "subscriptions/listen"
	methodListenAck = "notifications/subscriptions/acknowledged"
)

type listenHoldKey struct{}

// WithListenHold marks ctx: sessions opened with it hold their subscriptions/listen until
// Pool.Ready.
func WithListenHold(ctx context.Context) context.Context {
	return context.WithValue(ctx, listenHoldKey{}, true)
}

func listenHeld(ctx context.Context) bool {
	held, _ := ctx.Value(listenHoldKey{}).(bool)
	return held
}

// listenHolds are a server's held subscriptions/listen requests, by session.
type listenHolds struct {
	mu   sync.Mutex
	held map[*mcp.ClientSession]*heldListen
	// awaiting are sessions whose held listen was written: its acknowledgement re-lists.
	awaiting map[*mcp.ClientSession]bool
	// send is the sending handler below the pool's middleware (ListenTasks sends on it).
	send mcp.MethodHandler
}

// sender returns the sending handler below the pool's middleware (nil before it is added).
func (h *listenHolds) sender() mcp.MethodHandler {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.send
}

type heldListen struct {
	send  func() // writes the request (go-sdk's own send); nil until go-sdk sent it
	timer *time.Timer
}

// expect marks cs as a session whose listen is to be held.
func (h *listenHolds) expect(cs *mcp.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[*mcp.ClientSession]*heldListen{}
	}
	h.held[cs] = &heldListen{}
}

// hold keeps send for later if cs expects it to be held, reporting whether it did.
func (h *listenHolds) hold(cs *mcp.ClientSession, send func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.held[cs]
	if l == nil || l.send != nil {
		return false
	}
	l.send = send
	return true
}

// take removes cs's entry, returning what was held (nil if nothing).
func (h *listenHolds) take(cs *mcp.ClientSession) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.held[cs]
	if l == nil {
		return nil
	}
	delete(h.held, cs)
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.send != nil {
		if h.awaiting == nil {
			h.awaiting = map[*mcp.ClientSession]bool{}
		}
		h.awaiting[cs] = true
	}
	return l.send
}

// drop forgets cs (a session that failed or closed before its listen was written).
func (h *listenHolds) drop(cs *mcp.ClientSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.held[cs]; l != nil && l.timer != nil {
		l.timer.Stop()
	}
	delete(h.held, cs)
	delete(h.awaiting, cs)
}

// acknowledged reports (once) whether cs's acknowledged listen was one that was held.
func (h *listenHolds) acknowledged(cs *mcp.ClientSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.awaiting[cs] {
		return false
	}
	delete(h.awaiting, cs)
	return true
}

// releaseListenAfter writes sess's held listen, if any, d from now.
func (p *Pool) releaseListenAfter(sess *Session, d time.Duration) {
	h := &p.listens
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.held[sess.CS]; l != nil && l.timer == nil {
		l.timer = time.AfterFunc(d, func() { p.releaseListen(sess) })
	}
}

// clear forgets every held listen (the server is closing).
func (h *listenHolds) clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.held {
		if l.timer != nil {
			l.timer.Stop()
		}
	}
	h.held, h.awaiting = nil, nil
}

// releaseListen writes sess's held subscriptions/listen, if any, in the background.
func (p *Pool) releaseListen(sess *Session) {
	send := p.listens.take(sess.CS)
	if send == nil {
		return
	}
	p.Background(send)
}

// SendingMiddleware is the client's sending middleware (Config.Client's, added by the host): server/discover is bounded and
// observed (discoverMiddleware), and a held session's subscriptions/listen is kept.
func (p *Pool) SendingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	p.listens.mu.Lock()
	p.listens.send = next
	p.listens.mu.Unlock()
	discover := discoverMiddleware(next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodListen:
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
				send := func() {
					if ctx.Err() == nil { // go-sdk cancels it when the session closes
						_, _ = next(ctx, method, req)
					}
				}
				if p.listens.hold(cs, send) {
					return &mcp.SubscriptionsListenResult{}, nil
				}
			}
		case "server/discover":
			if n, _ := ctx.Value(negotiationKey{}).(*negotiation); n != nil && n.holdListen {
				if cs, ok := req.GetSession().(*mcp.ClientSession); ok {
					p.listens.expect(cs)
					n.mu.Lock()
					n.session = cs
					n.mu.Unlock()
				}
			}
		}
		return discover(ctx, method, req)
	}
}

// ReceivingMiddleware is the client's receiving middleware (added by the host): the acknowledgement of a
// listen that was held re-lists the server (see the top of this file).
func (p *Pool) ReceivingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == methodListenAck {
			if cs, ok := req.GetSession().(*mcp.ClientSession); ok && p.listens.acknowledged(cs) {
				p.cfg.Host.Relist()
			}
		}
		return res, err
	}
}
