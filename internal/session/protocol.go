package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/redact"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/transport"
)

// Protocol negotiation. With no pin, go-sdk's Connect offers its newest version
// (2026-07-28) through server/discover and falls back to initialize with LegacyVersion on
// the same connection when discover fails. The pool adds what legacy servers need:
//
//   - discover that goes unanswered ends after discoverWait, so initialize follows promptly
//     instead of at the connect deadline;
//   - a server that closes the connection on discover (a stdio server exiting on the unknown
//     method) is started again with LegacyVersion pinned;
//   - a -32022 UnsupportedProtocolVersion error naming the server's versions is retried once
//     with the newest version both sides support;
//   - a server that needed a fallback keeps its pin for redials, so they cost no probe
//     (except one whose discover went unanswered while npx was still installing it).
//
// Config.ProtocolVersion pins a version outright; legacy SSE servers are offered
// LegacyVersion (their transport predates discover).
const (
	LegacyVersion = "2025-11-25" // what initialize offers after a failed discover (go-sdk's choice too)
	ModernVersion = "2026-07-28" // the first version negotiated through server/discover
	CodeRejected  = -32005       // go-sdk's "rejected by transport": an HTTP failure, not the server's error
)

// SupportedVersion reports whether go-sdk speaks protocol version v.
func SupportedVersion(v string) bool { return slices.Contains(mcp.SupportedProtocolVersions(), v) }

// discoverWait is how long server/discover may go unanswered before initialize is tried: a
// quarter of the connect timeout, within [Limits.MinDiscoverWait, Limits.MaxDiscoverWait]. A server still
// starting up after that is offered the legacy handshake; it works either way.
func (p *Pool) discoverWait() time.Duration {
	return min(max(p.cfg.ConnectTimeout/4, p.cfg.Limits.MinDiscoverWait), p.cfg.Limits.MaxDiscoverWait)
}

// protocol is what a pool remembers about its server's protocol between sessions.
type protocol struct {
	mu      sync.Mutex
	pin     string // version to offer on redials, "" to negotiate
	how     string // how pin was reached, for Session.Negotiation
	version string // the version the last shared session agreed on (offered to users' sessions)
}

func (pr *protocol) agreed(v string) {
	pr.mu.Lock()
	pr.version = v
	pr.mu.Unlock()
}

func (pr *protocol) keep(pin, how string) {
	pr.mu.Lock()
	pr.pin, pr.how = pin, how
	pr.mu.Unlock()
}

// userPin is the version a user's session is offered: the one the shared session agreed on,
// else the configured pin (a server with no shared session).
func (p *Pool) userPin() string {
	p.proto.mu.Lock()
	pin := p.proto.version
	p.proto.mu.Unlock()
	if pin == "" {
		pin = p.cfg.ProtocolVersion
	}
	return pin
}

// negotiation observes one Connect's server/discover; it travels in the Connect ctx to
// discoverMiddleware.
type negotiation struct {
	wait time.Duration
	// holdListen says the session's subscriptions/listen is held (listenhold.go).
	holdListen bool

	mu         sync.Mutex
	session    *mcp.ClientSession // the session discover was sent on, when holdListen
	sent       bool
	err        error // the last discover's failure; nil if it succeeded
	unanswered bool  // the last discover timed out after wait
	npm        bool  // and npm was still installing the server's package then

	// installing reports npm still installing the server (transport.Conn.Installing); set
	// before Connect.
	installing func() bool
}

type negotiationKey struct{}

func (n *negotiation) outcome() (sent bool, err error, unanswered bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sent, n.err, n.unanswered
}

// discoverMiddleware bounds server/discover by the negotiation's wait and records its
// outcome. Other methods pass through.
func discoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		n, _ := ctx.Value(negotiationKey{}).(*negotiation)
		if method != "server/discover" || n == nil {
			return next(ctx, method, req)
		}
		dctx, cancel := context.WithTimeout(ctx, n.wait)
		defer cancel()
		res, err := next(dctx, method, req)
		if dr, ok := res.(*mcp.DiscoverResult); ok && err == nil && !offersModern(dr.SupportedVersions) {
			// go-sdk falls back to initialize after this answer too.
			err = fmt.Errorf("no version from %s on offered (%s)", ModernVersion, strings.Join(dr.SupportedVersions, ", "))
		}
		unanswered := err != nil && dctx.Err() != nil && ctx.Err() == nil
		npm := unanswered && n.installing != nil && n.installing()
		n.mu.Lock()
		n.sent, n.err, n.unanswered, n.npm = true, err, unanswered, npm
		n.mu.Unlock()
		return res, err
	}
}

// offersModern reports whether versions holds one go-sdk speaks through server/discover.
func offersModern(versions []string) bool {
	for _, v := range versions {
		if v >= ModernVersion && SupportedVersion(v) {
			return true
		}
	}
	return false
}

// versionPlan returns the version to offer a new session over kind k ("" negotiates) and
// why.
func (p *Pool) versionPlan(k transport.Kind) (pin, why string) {
	switch {
	case p.cfg.ProtocolVersion != "":
		return p.cfg.ProtocolVersion, "pinned by the server's protocolVersion"
	case k == transport.KindSSE:
		return LegacyVersion, "initialize (legacy HTTP+SSE transport)"
	}
	p.proto.mu.Lock()
	defer p.proto.mu.Unlock()
	if p.proto.pin != "" {
		return p.proto.pin, p.proto.how + " (kept from the first connect)"
	}
	return "", ""
}

// openKind starts one session over kind k, negotiating the protocol version (see the
// comment on LegacyVersion). The bool reports that Streamable HTTP was refused the way a
// legacy SSE server refuses it.
func (p *Pool) openKind(ctx context.Context, k transport.Kind) (*Session, bool, *failure) {
	pin, why := p.versionPlan(k)
	for attempt := 0; ; attempt++ {
		n := &negotiation{wait: p.discoverWait(), holdListen: listenHeld(ctx)}
		sess, fallback, f := p.openAttempt(ctx, k, pin, n)
		if f == nil {
			p.noteProtocol(sess, pin, why, n)
			return sess, false, nil
		}
		n.mu.Lock()
		cs := n.session
		n.mu.Unlock()
		if cs != nil {
			p.listens.drop(cs)
		}
		if attempt > 0 || fallback || ctx.Err() != nil || p.cfg.Life.Err() != nil {
			return nil, fallback, f
		}
		if v, refused := versionFromRefusal(f.err); v != "" && v != pin {
			p.cfg.Log.Debug("protocol version refused; retrying", "refused", refused, "retry", v)
			pin, why = v, fmt.Sprintf("%s after the server refused %s (-32022)", handshake(v), refused)
			continue
		}
		if sent, derr, _ := n.outcome(); pin == "" && sent && derr != nil && k != transport.KindHTTP {
			p.cfg.Log.Debug("the server closed the connection after server/discover; retrying with initialize", "err", f.err)
			pin, why = LegacyVersion, "initialize after the server closed the connection on server/discover"
			p.proto.keep(pin, why)
			continue
		}
		return nil, fallback, f
	}
}

// handshake names the handshake go-sdk uses for version v.
func handshake(v string) string {
	if v >= ModernVersion {
		return "server/discover"
	}
	return "initialize"
}

// sessionOptions are go-sdk's options for a session offered pin ("" negotiates).
func sessionOptions(pin string) *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: pin}
}

// withNegotiation returns ctx carrying n for discoverMiddleware.
func withNegotiation(ctx context.Context, n *negotiation) context.Context {
	return context.WithValue(ctx, negotiationKey{}, n)
}

// noteProtocol records in sess how its version was reached, and remembers a fallback for
// redials.
func (p *Pool) noteProtocol(sess *Session, pin, why string, n *negotiation) {
	version := sess.CS.InitializeResult().ProtocolVersion
	how := why
	if pin == "" {
		sent, err, unanswered := n.outcome()
		keep := sent && err != nil // a fallback is kept for redials
		switch {
		case !sent || err == nil:
			how = "server/discover"
		case unanswered:
			// Not a fault: a server still starting (npx installing its package) or one that
			// ignores the method, and initialize then works. On Linux npx installing is seen
			// in the process tree.
			n.mu.Lock()
			npm := n.npm
			n.mu.Unlock()
			why := "still starting, or the server ignores it"
			if npm {
				why = "npx is still installing the package"
			}
			how = fmt.Sprintf("initialize: no answer to server/discover after %s (%s)", n.wait, why)
			// A package npx was installing answers discover once installed: its redials
			// negotiate again rather than keep the pin.
			keep = !npm
		default:
			how = "initialize after server/discover failed: " + shortCause(err)
		}
		if keep {
			p.proto.keep(LegacyVersion, how)
		}
	}
	sess.Negotiation = how
	p.cfg.Log.Debug("protocol negotiated", "version", version, "how", how)
}

// shortCause is err's message, cut for a status line: a JSON-RPC error's message alone.
func shortCause(err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code != CodeRejected {
		return fmt.Sprintf("%s (%d)", redact.Line(je.Message, 300), je.Code)
	}
	return redact.Line(err.Error(), 120)
}

// versionFromRefusal reads a -32022 UnsupportedProtocolVersion error: it returns the newest
// version go-sdk supports among those the server listed in data.supported ("" if none or
// err is something else) and the version the server refused.
func versionFromRefusal(err error) (version, refused string) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeUnsupportedProtocolVersion || len(je.Data) == 0 {
		return "", ""
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(je.Data, &data) != nil {
		return "", ""
	}
	for _, v := range mcp.SupportedProtocolVersions() {
		if slices.Contains(data.Supported, v) {
			return v, data.Requested
		}
	}
	return "", data.Requested
}
