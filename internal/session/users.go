package session

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/wire"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/transport"
)

// Users. On a per-user server (Config.PerUser) each user's requests go on the user's own
// session, opened with the user's grant, or, on a stateless server (a Streamable HTTP
// server on protocol 2026-07-28 keeps no session), a tools/call goes on the shared
// connection with the user's OAuth handler (wire.CallOptions.OAuth): no session,
// connection or client per user, only the handler. The few requests that need go-sdk's
// session (a call that becomes an MCP task or asks for input, resources/read, prompts) get
// the user's own session, opened on first need; a listing of the user's tools gets one for
// the listing only (ListOnce). The users' state (handler, session, catalogue) is bounded by
// Users.MaxSessions and Users.IdleTimeout.

type userCtxKey struct{}

// WithUser returns ctx naming the user a request is made for.
func WithUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userCtxKey{}, id)
}

// User returns the user WithUser put in ctx.
func User(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(userCtxKey{}).(string)
	return id, ok
}

// ErrNoUser is the error of a request without a user (WithUser) on a server whose grants are
// per user, for a host serving users.
var ErrNoUser = errors.New("no user on the call (bridge.WithUser): this server's grants are per user")

// userTable is a pool's per-user state.
type userTable struct {
	mu  sync.Mutex
	m   map[string]*userState
	lru list.List // of *userState, most recently used first
	// private is set once the server's catalogue is per user; noShared when the server has
	// no shared session, since only a user's grant opens it.
	private, noShared atomic.Bool
	// The users' shared catalogue (UserCatalogue): pub, a user's public listing; pubListing,
	// the listing under way that may become it; pubGen counts the times pub was found stale;
	// ownOnly is set once a user's listing was private.
	pub        any
	pubListing *catListing
	pubGen     int
	ownOnly    bool
	// conn is the users' connection of a server with no shared session (usersConn), opened
	// with connUser's grant; stateful is set once a session of such a server was found to keep
	// state: each user has a session of their own then.
	conn     slot
	connUser string
	stateful atomic.Bool
	// connViews counts the calls in flight on each users' connection (userView), and
	// connRetired holds the ones retired while calls ran on them: closed when their last call
	// ends (releaseConn), so a logout never cuts another user's call.
	connViews   map[*Session]int
	connRetired map[*Session]bool
}

// userState is one user's OAuth handler, session and catalogue on one server; guarded by
// userTable.mu.
type userState struct {
	id   string
	h    *auth.Handler
	slot slot // the user's session
	used time.Time
	busy int // requests in flight on the session (or with h), listings
	el   *list.Element
	// The user's catalogue, on a server whose catalogue is per user (UserCatalogue): the
	// host's value, fresh until expires.
	cat     any
	expires time.Time
	listing *catListing // the listing under way for cat
	catGen  int         // counts the times cat was found stale (tools/list_changed)
}

// catListing is one listing for a user, shared by that user's concurrent callers.
type catListing struct {
	user   *userState // whose grant it lists with
	gen    int        // the user's catGen when it started: a listing older than a change is not kept
	pubGen int        // the table's pubGen when it started
	done   chan struct{}
	cat    any
	err    error
}

// user returns user's state, created on first use, as the most recently used; it closes
// sessions idle too long and the least recently used idle ones beyond the cap. users.mu held.
func (p *Pool) user(id string) *userState {
	t := &p.users
	if t.m == nil {
		t.m = map[string]*userState{}
	}
	now := time.Now()
	u := t.m[id]
	if u == nil {
		u = &userState{id: id, h: p.cfg.Users.Handler(id)}
		u.el = t.lru.PushFront(u)
		t.m[id] = u
	} else {
		t.lru.MoveToFront(u.el)
	}
	u.used = now
	idle, most := p.cfg.Users.IdleTimeout, p.cfg.Users.MaxSessions
	for e := t.lru.Back(); e != nil && e != u.el; {
		v := e.Value.(*userState)
		prev := e.Prev()
		if v.busy == 0 && v.slot.opening == nil && (now.Sub(v.used) > idle || t.lru.Len() > most) {
			p.evict(v)
		} else if now.Sub(v.used) <= idle && t.lru.Len() <= most {
			break
		}
		e = prev
	}
	return u
}

// evict forgets u, closing its session in the background; users.mu held.
func (p *Pool) evict(u *userState) {
	p.users.lru.Remove(u.el)
	delete(p.users.m, u.id)
	if sess := u.slot.sess; sess != nil {
		u.slot.sess = nil
		p.Background(func() { _ = sess.Close() })
	}
}

// userSession returns user's live session, opening it (acquire: once, shared by the user's
// concurrent callers) from the user's grant; a user without one gets the host's NeedsLogin.
// A user whose server keeps failing is reopened on the shared session's backoff schedule.
func (p *Pool) userSession(ctx context.Context, id string) (*Session, func(), error) {
	var held *userState
	sess, err := p.acquire(ctx, &p.users.mu, func() (claim, error) {
		if p.cfg.Life.Err() != nil {
			return claim{}, ErrClosed
		}
		u := p.user(id)
		u.slot.backoff = true // the shared session's schedule (acquire)
		return claim{
			sl:   &u.slot,
			use:  func() { u.busy++; held = u },
			open: func() (*Session, error) { return p.openUser(u) },
			keep: func(*Session) bool { return p.users.m[u.id] == u && p.cfg.Life.Err() == nil },
			// A user without a usable grant is not a failing server: the open after the
			// user's login is not held back.
			counts: func(err error) bool { return !errors.Is(err, auth.ErrNeedsLogin) && !p.cfg.Host.IsNeedsLogin(err) },
		}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return sess, func() { p.release(held) }, nil
}

func (p *Pool) release(u *userState) {
	p.users.mu.Lock()
	u.busy--
	u.used = time.Now()
	p.users.mu.Unlock()
}

// openUser opens u's session, bounded by the connect timeout and by Close.
func (p *Pool) openUser(u *userState) (*Session, error) {
	ctx, cancel := context.WithTimeout(p.cfg.Life, p.cfg.ConnectTimeout)
	defer cancel()
	return p.dialUser(ctx, u)
}

// dialUserGrant opens a session with u's token over Streamable HTTP, offering the protocol
// version the server's shared session agreed on (Pool.dialUser).
func (p *Pool) dialUserGrant(ctx context.Context, u *userState) (*Session, error) {
	ok, err := u.h.Ensure(ctx)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", u.id, err)
	}
	if !ok {
		return nil, p.cfg.Host.NeedsLogin(u.id, auth.ReasonNoGrant)
	}
	spec := p.cfg.Spec
	spec.OAuth, spec.WrapBase = u.h, u.h.WrapTransport // the user's refresh waits and DPoP key
	conn, err := transport.Open(spec, transport.KindHTTP)
	if err != nil {
		return nil, err
	}
	var origin atomic.Pointer[Session] // the session, for its tasks' notifications
	p.watchTasks(conn, &origin)
	initTap := &wire.Tap{Method: "initialize"} // the raw initialize result: the server's tasks capability
	defer initTap.Done()
	sctx, cancelSess := context.WithCancel(p.cfg.Life)
	stop := context.AfterFunc(ctx, cancelSess)
	cs, err := p.cfg.Client.Connect(wire.WithTap(sctx, initTap), conn.Transport(), sessionOptions(p.userPin()))
	if !stop() && err == nil {
		_ = cs.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancelSess()
		_ = conn.Close()
		return nil, p.userErr(u.id, fmt.Errorf("user %q: opening the session: %w", u.id, err))
	}
	sess := p.newSession(cs, conn, cancelSess, time.Now())
	sess.Kind = transport.KindHTTP
	ir := cs.InitializeResult()
	sess.Caps = tasks.ReadCaps(initTap.Result(), ir, ir.ProtocolVersion >= ModernVersion)
	origin.Store(sess)
	return sess, nil
}

// userErr turns a needs-login failure of a request for user into the host's NeedsLogin.
func (p *Pool) userErr(user string, err error) error {
	if user == "" || err == nil || !errors.Is(err, auth.ErrNeedsLogin) || p.cfg.Host.IsNeedsLogin(err) {
		return err
	}
	return p.cfg.Host.NeedsLogin(user, auth.ReasonGrantRefused)
}

// retireUserSession forgets sess when it is a user's session that a request found dead.
func (p *Pool) retireUserSession(sess *Session, cause error) {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	if p.users.conn.sess == sess {
		p.users.conn.sess = nil
		p.users.conn.fail(cause)
		p.retireConn(sess)
		return
	}
	for _, u := range p.users.m {
		if u.slot.sess == sess {
			u.slot.sess = nil
			u.slot.fail(cause)
			p.Background(func() { _ = sess.Close() })
			return
		}
	}
}

// Forget drops user's state (a logout), closing the user's session.
func (p *Pool) Forget(user string) {
	p.users.mu.Lock()
	if u := p.users.m[user]; u != nil {
		p.evict(u)
	}
	if sess := p.users.conn.sess; sess != nil && p.users.connUser == user {
		p.users.conn.sess = nil // opened with the grant the user gave up
		p.retireConn(sess)
	}
	p.users.mu.Unlock()
}

// retireConn closes sess, a users' connection no longer handed out, once no call runs on
// it; p.users.mu is held.
func (p *Pool) retireConn(sess *Session) {
	t := &p.users
	if t.connViews[sess] > 0 {
		if t.connRetired == nil {
			t.connRetired = make(map[*Session]bool)
		}
		t.connRetired[sess] = true
		return
	}
	p.Background(func() { _ = sess.Close() })
}

// holdConn counts a call on base when it is the current users' connection; false when base
// was retired meanwhile (the call goes on the user's own session).
func (p *Pool) holdConn(base *Session) bool {
	t := &p.users
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn.sess != base {
		return false
	}
	if t.connViews == nil {
		t.connViews = make(map[*Session]int)
	}
	t.connViews[base]++
	return true
}

// releaseConn ends a call counted by holdConn, closing base if it was retired and this was
// its last call.
func (p *Pool) releaseConn(base *Session) {
	t := &p.users
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.connViews[base]--; t.connViews[base] > 0 {
		return
	}
	delete(t.connViews, base)
	if t.connRetired[base] {
		delete(t.connRetired, base)
		p.Background(func() { _ = base.Close() })
	}
}

// UserSessions is how many per-user sessions the pool holds open.
func (p *Pool) UserSessions() int {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	n := 0
	for _, u := range p.users.m {
		if u.slot.sess != nil {
			n++
		}
	}
	return n
}

// UserStates is how many users the pool keeps state for (handler, session, catalogue).
func (p *Pool) UserStates() int {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	return len(p.users.m)
}

// OAuthHandlers returns the server's OAuth handlers: its own and its users'.
func (p *Pool) OAuthHandlers() []*auth.Handler {
	if p.cfg.OAuth == nil {
		return nil
	}
	hs := []*auth.Handler{p.cfg.OAuth}
	p.users.mu.Lock()
	for _, u := range p.users.m {
		if u.h != nil {
			hs = append(hs, u.h)
		}
	}
	p.users.mu.Unlock()
	return hs
}

// closeUsers closes every user's session (Close; Config.Life is already cancelled).
func (p *Pool) closeUsers() {
	p.users.mu.Lock()
	var all []*Session
	if sess := p.users.conn.sess; sess != nil {
		all = append(all, sess)
		p.users.conn.sess = nil
	}
	for _, u := range p.users.m {
		if u.slot.sess != nil {
			all = append(all, u.slot.sess)
			u.slot.sess = nil
		}
	}
	p.users.mu.Unlock()
	var wg sync.WaitGroup
	for _, sess := range all {
		wg.Go(func() { _ = sess.Close() })
	}
	wg.Wait()
}

// userView returns, for a tools/call by user id on a stateless server, a view of the shared
// session (or, on a server that opens only with a user's grant, of the users' connection:
// usersConn) that calls with the user's OAuth handler; ok is false when the call must go on
// the user's own session (a stateful server, or a call direct refuses: one that may become a
// task). A user without a grant gets the host's NeedsLogin at once, without contacting the
// server.
func (p *Pool) userView(ctx context.Context, id string, direct func(*Session) bool) (view *Session, release func(), ok bool, err error) {
	t := &p.users
	if t.noShared.Load() && t.stateful.Load() {
		return nil, nil, false, nil
	}
	t.mu.Lock()
	if p.cfg.Life.Err() != nil {
		t.mu.Unlock()
		return nil, nil, false, ErrClosed
	}
	u := p.user(id)
	u.busy++ // the handler is not evicted while the call runs
	t.mu.Unlock()
	release = func() { p.release(u) }
	shared, err := p.viewBase(ctx, u)
	if err == nil && shared != nil && shared.Stateless() && direct(shared) {
		if p.users.noShared.Load() {
			if !p.holdConn(shared) {
				release()
				return nil, nil, false, nil // retired meanwhile: u's own session
			}
			release = func() { p.releaseConn(shared); p.release(u) }
		}
		// Caps stays zero: a view never taps a call as a task (direct checked shared's).
		view = &Session{CS: shared.CS, Conn: shared.Conn, Started: shared.Started, Kind: shared.Kind, cancel: func() {}, dead: shared.dead, pool: p,
			shared: shared, user: id, userOAuth: u.h}
		view.path.once.Do(func() { view.path.direct, view.path.protocol = shared.path.choose(shared) })
		return view, release, true, nil
	}
	release()
	return nil, nil, false, err
}

// viewBase returns the session a view for u's call is of, after checking u's grant: the
// shared one, or the users' connection (usersConn); nil when the call must go on u's own
// session.
func (p *Pool) viewBase(ctx context.Context, u *userState) (*Session, error) {
	if !p.users.noShared.Load() {
		shared, err := p.Shared(ctx)
		if err != nil || !shared.Stateless() {
			return nil, err
		}
		return shared, p.hasGrant(ctx, u)
	}
	if err := p.hasGrant(ctx, u); err != nil {
		return nil, err
	}
	base, err := p.usersConn(ctx, u)
	if err != nil && (errors.Is(err, auth.ErrNeedsLogin) || p.cfg.Host.IsNeedsLogin(err)) {
		return nil, nil // the grant of the user who opened it was refused: u's own session says
	}
	if err == nil && !base.Stateless() {
		p.users.stateful.Store(true) // each user has a session of their own from now on
		p.retireUserSession(base, errors.New("the server keeps sessions"))
		return nil, nil
	}
	return base, err
}

// usersConn returns the users' connection of a server that opens only with a user's grant
// (noShared): one session, opened (see acquire) with the grant of the user u whose request
// needed it first. On a stateless server every user's tools/call goes on it, direct, with the
// user's own OAuth handler (userView), so that a user's state is only the handler and grant;
// go-sdk's requests on it (none of a user's: userView keeps views off go-sdk's path) carry
// the opener's token. The opener's logout (Forget) retires it: it is closed once the calls
// on it have ended.
func (p *Pool) usersConn(ctx context.Context, u *userState) (*Session, error) {
	t := &p.users
	return p.acquire(ctx, &t.mu, func() (claim, error) {
		if p.cfg.Life.Err() != nil {
			return claim{}, ErrClosed
		}
		t.conn.backoff = true
		return claim{
			sl:   &t.conn,
			use:  func() {},
			open: func() (*Session, error) { return p.openUser(u) },
			keep: func(*Session) bool {
				t.connUser = u.id
				return p.cfg.Life.Err() == nil
			},
			counts: func(err error) bool { return !errors.Is(err, auth.ErrNeedsLogin) && !p.cfg.Host.IsNeedsLogin(err) },
		}, nil
	})
}

// hasGrant returns nil when u has a grant, else the host's NeedsLogin (or the token store's
// failure), without contacting the server.
func (p *Pool) hasGrant(ctx context.Context, u *userState) error {
	has, err := u.h.Ensure(ctx)
	if err != nil {
		return fmt.Errorf("user %q: %w", u.id, err)
	}
	if !has {
		return p.cfg.Host.NeedsLogin(u.id, auth.ReasonNoGrant)
	}
	return nil
}

// continueUserCall finishes on the user's own session a direct call of the user's (on a
// stateless server) whose result asks for input: go-sdk's multi-round-trip loop answers
// the requests and retries, with the user's token.
func (p *Pool) continueUserCall(ctx context.Context, user string, ir *wire.InputRequiredError, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	sess, release, err := p.userSession(ctx, user)
	if err != nil {
		return nil, err
	}
	defer release()
	return sess.CS.CallTool(ir.Continue(ctx), params)
}

// UserHandler returns user id's OAuth handler on the server (a login starts with it), keeping
// the user's state as the most recently used.
func (p *Pool) UserHandler(id string) *auth.Handler {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	return p.user(id).h
}
