package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/transport"
)

// Config is what a pool needs to open sessions to one server.
type Config struct {
	ID     string // the server's ID, for log lines
	Spec   transport.Spec
	Client *mcp.Client     // the client every session of the server is opened with
	Log    *slog.Logger    // the server's logger
	Life   context.Context // cancelled when the server is closed: every session and open ends with it
	// ConnectTimeout bounds a redial (open and listing), a user's open and a user's listing.
	ConnectTimeout time.Duration
	// ProtocolVersion pins the version every session is offered; "" negotiates.
	ProtocolVersion string
	// OAuth is the server's own OAuth handler; nil for a server without OAuth.
	OAuth *auth.Handler
	// ConfigErr is a problem with the server's configuration: every open fails with it.
	ConfigErr error
	// PerUser says the server's grants are per user (an AuthOAuth server): a request of a
	// user (WithUser) goes on the user's own session, or the user's token.
	PerUser bool
	// ServeUsers says the host serves many users: on a per-user server a request must name
	// one. Unset, a request without a user goes on the shared session.
	ServeUsers bool
	Users      Users // the bounds of the per-user state (on a per-user server)
	Limits     Limits
	Host       Host
	// Tasks takes the task status notifications the sessions' servers send (tasknotify.go);
	// nil: none are taken.
	Tasks TaskSink
}

// Users are the bounds of a pool's per-user state and how a user's OAuth handler is made.
type Users struct {
	MaxSessions int           // users kept beyond which the least recently used idle one is dropped
	IdleTimeout time.Duration // a user unused this long is dropped
	// Handler makes user id's OAuth handler on the server.
	Handler func(id string) *auth.Handler
}

// Limits are the fixed bounds of a pool (the host's limits table holds their values).
type Limits struct {
	FirstBackoff    time.Duration // the first wait before redialling a server that keeps failing
	MaxBackoff      time.Duration // the longest
	CloseWait       time.Duration // closing one session beyond the transport's own bound
	MinDiscoverWait time.Duration // the shortest wait for server/discover (a quarter of ConnectTimeout)
	MaxDiscoverWait time.Duration // server/discover before falling back to initialize
	ListenHold      time.Duration // a held subscriptions/listen after the first listing (listenhold.go)
	StderrTail      int           // a stdio server's stderr tail in a failure's log line
}

// Host is what the pool asks of the code that uses it: its error types, and what it does
// with a new session. Each func is called without a lock of the pool held, except Install's
// apply (see Pool.Install).
type Host struct {
	// Fail returns the host's error for a failure in phase (a Phase* name), with conn's
	// stderr when conn is not nil.
	Fail func(phase string, err error, conn *transport.Conn) error
	// AsFail returns the host's failure err is or wraps (one Fail made), or nil.
	AsFail func(err error) error
	// NeedsLogin returns the host's error for a user who must log in, and why.
	NeedsLogin func(user string, reason auth.LoginReason) error
	// IsNeedsLogin reports whether err is or wraps an error NeedsLogin made.
	IsNeedsLogin func(err error) bool
	// ValidUser checks a user ID.
	ValidUser func(id string) error
	// Opened reports an open of the shared session over kind k: sess on success, nil when k failed.
	Opened func(k transport.Kind, sess *Session)
	// List lists sess's tools after a redial and installs them (Pool.Install); an error is
	// the listing's.
	List func(ctx context.Context, sess *Session) error
	// Relist re-lists the server's tools in the background (a held listen was acknowledged).
	Relist func()
}

// Pool holds one server's sessions: the shared session and, for a per-user server, each
// user's state (session, catalogue, OAuth handler). It is safe for concurrent use.
//
// Locks (the order of this package; the host's locks taken by Host.List's Install apply
// come after Pool.mu). A lock may be taken while holding the ones before it on its line:
//
//	Pool.mu   -> Pool.bgMu (and the host's catalogue lock, in Install)
//	users.mu  -> Pool.bgMu
//	Pool.bgMu, protocol.mu, negotiation.mu, listenHolds.mu, StoreRetries.mu: leaves
//
// No lock is held while calling out: not the Host's funcs (but Install's apply), not the
// logger, not go-sdk, not the network.
type Pool struct {
	cfg Config

	mu     sync.Mutex // guards shared and closed
	shared slot
	closed bool

	proto   protocol    // the protocol version to keep for redials (protocol.go)
	listens listenHolds // subscriptions/listen held while a set starts (listenhold.go)
	paths   PathCounts  // tools/call by path (callpath.go)
	users   userTable   // per-user state (users.go)
	// dialUser opens a user's session (users.go); a field so that tests can fail it.
	dialUser func(ctx context.Context, u *userState) (*Session, error)

	bgMu   sync.Mutex
	bgN    int           // background teardowns and opens running
	bgIdle chan struct{} // closed when bgN drops to 0, for waitBackground
}

// New returns the pool of the server cfg describes. No session is opened until asked for.
func New(cfg Config) *Pool {
	p := &Pool{cfg: cfg}
	p.dialUser = p.dialUserGrant
	return p
}

// slot is the place of one session, the shared one or a user's: the live session, the open
// under way, and the failures that set its backoff. Guarded by the lock of its owner
// (Pool.mu, users.mu).
type slot struct {
	sess     *Session
	opening  *opening
	failures int         // consecutive failed opens and session deaths
	failing  atomic.Bool // failures > 0 (set under the lock), read without it by healthy
	lastDial time.Time   // start of the last open
	lastErr  error       // cause of the last failure, for suppressed opens
	// backoff says failures delay the next open (backoff below).
	backoff bool
}

// opening is one open of a slot's session, shared by every caller that needs it meanwhile.
type opening struct {
	done chan struct{} // closed when the open ended
	err  error         // its outcome; valid once done is closed
}

// fail records a failure of sl's session or of its open; sl's lock held.
func (sl *slot) fail(cause error) {
	if !sl.backoff {
		return
	}
	sl.failures++
	sl.failing.Store(true)
	sl.lastErr = cause
}

// healthy resets sl's backoff after a request succeeded.
func (sl *slot) healthy(mu *sync.Mutex) {
	if !sl.failing.Load() { // the common case: nothing to reset, no lock taken
		return
	}
	mu.Lock()
	sl.failures = 0
	sl.failing.Store(false)
	mu.Unlock()
}

// claim is what acquire needs of one slot: found with the slot's lock held.
type claim struct {
	sl   *slot
	use  func()                   // called, lock held, when a live session is returned
	open func() (*Session, error) // opens a session (on its own goroutine); nil sess: installed by open itself
	keep func(sess *Session) bool // called, lock held, with open's session: whether it may be kept
	// counts reports whether a failed open counts towards the backoff; nil: every one does.
	counts func(err error) bool
}

// acquire returns the live session of the slot find claims, opening one (once, shared by
// concurrent callers) when there is none or it died. A slot that keeps failing is reopened
// with exponential backoff; within the backoff window callers get the last error at once
// rather than waiting. The open runs on its own goroutine (bounded by the connect timeout
// and by Close), so a caller whose ctx ends first returns at once. mu guards the slot; find
// is called with mu held, and may refuse (the pool is closed).
func (p *Pool) acquire(ctx context.Context, mu *sync.Mutex, find func() (claim, error)) (*Session, error) {
	for {
		mu.Lock()
		c, err := find()
		if err != nil {
			mu.Unlock()
			return nil, err
		}
		sl := c.sl
		if sess := sl.sess; sess != nil {
			select {
			case <-sess.dead:
				sl.sess = nil
				sl.fail(errors.New("the session ended"))
				p.Background(func() { _ = sess.Close() })
			default:
				c.use()
				mu.Unlock()
				return sess, nil
			}
		}
		op := sl.opening
		if op == nil {
			if wait := p.backoff(sl.failures); sl.backoff && time.Since(sl.lastDial) < wait {
				left := wait - time.Since(sl.lastDial)
				err := fmt.Errorf("server is down; next reconnect allowed in %s (after %d failures, last: %v)", left.Round(time.Millisecond), sl.failures, sl.lastErr)
				mu.Unlock()
				return nil, err
			}
			op = &opening{done: make(chan struct{})}
			sl.opening = op
			sl.lastDial = time.Now()
			p.Background(func() {
				sess, err := c.open()
				mu.Lock()
				sl.opening = nil
				if err == nil && sess != nil {
					if c.keep(sess) {
						sl.sess = sess
						sess.slot = sl
					} else {
						err = ErrClosed
						p.Background(func() { _ = sess.Close() })
					}
				}
				if err != nil && (c.counts == nil || c.counts(err)) {
					sl.fail(err)
				}
				op.err = err
				mu.Unlock()
				close(op.done)
			})
		}
		mu.Unlock()
		select {
		case <-op.done:
			if op.err != nil {
				return nil, op.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// backoff is the wait before the next open of a slot after failures.
func (p *Pool) backoff(failures int) time.Duration { return Backoff(p.cfg.Limits, failures) }

// Shared returns the live shared session, redialling it (see acquire) when it died.
func (p *Pool) Shared(ctx context.Context) (*Session, error) {
	return p.acquire(ctx, &p.mu, func() (claim, error) {
		if p.closed {
			return claim{}, ErrClosed
		}
		p.shared.backoff = true
		// The redial installs the session it opens itself, with its listing (Install).
		return claim{sl: &p.shared, use: func() {}, open: func() (*Session, error) { return nil, p.redial() }}, nil
	})
}

// Current returns the live shared session, or nil while there is none.
func (p *Pool) Current() *Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shared.sess
}

// Ended reports whether origin, the session that created a task, was a stdio server's
// process that has ended or is being stopped (its answer went over the message limit, it
// died, or the pool has replaced it): its tasks ended with it, and the error says why. Any
// other origin (an HTTP session: the server keeps tasks beyond it) has not ended.
func (p *Pool) Ended(origin any) (bool, error) {
	sess, ok := origin.(*Session)
	if !ok || sess.Kind != transport.KindStdio {
		return false, nil
	}
	if err := sess.Conn.Overrun(); err != nil {
		return true, fmt.Errorf("the server process that ran it was stopped when its answer went over the message limit: %w", err)
	}
	select {
	case <-sess.Dead():
	default:
		if cur := p.Current(); cur == nil || cur == sess {
			return false, nil
		}
	}
	return true, errors.New("the server process that ran it exited; the one started since cannot know it")
}

// Install makes sess the live shared session, calling apply (the host's catalogue update)
// with the pool's lock held. When onlyIf is set, nothing happens unless onlyIf is still the
// live session (a re-list must not undo a redial that happened meanwhile); it reports
// whether sess was installed.
func (p *Pool) Install(sess, onlyIf *Session, apply func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if onlyIf != nil && p.shared.sess != onlyIf {
		return false
	}
	p.shared.sess = sess
	apply()
	return true
}

// Ready marks sess, the first shared session, as in place after its listing: the backoff
// counts from now, and a held subscriptions/listen is written after Limits.ListenHold.
func (p *Pool) Ready(sess *Session) {
	p.releaseListenAfter(sess, p.cfg.Limits.ListenHold)
	p.mu.Lock()
	p.shared.lastDial = time.Now()
	p.mu.Unlock()
}

// Discard closes sess, a session that failed before it was installed, waiting for the
// teardown no longer than ctx allows.
func (p *Pool) Discard(ctx context.Context, sess *Session) {
	p.listens.drop(sess.CS)
	p.closeWithin(ctx, sess)
}

// redial opens a new shared session and re-lists tools, bounded by the connect timeout and
// by Close.
func (p *Pool) redial() error {
	ctx, cancel := context.WithTimeout(p.cfg.Life, p.cfg.ConnectTimeout)
	defer cancel()
	p.cfg.Log.Info("reconnecting")
	sess, f := p.open(ctx)
	if f != nil {
		p.cfg.Log.Warn("reconnect failed", "phase", f.phase, "err", f.err, "stderr", p.tail(f.stderr()))
		return f.host(p)
	}
	if err := p.cfg.Host.List(ctx, sess); err != nil {
		p.closeWithin(ctx, sess)
		p.cfg.Log.Warn("reconnect failed", "phase", phaseList, "err", err)
		return p.cfg.Host.Fail(phaseList, err, sess.Conn)
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		_ = sess.Close()
		return ErrClosed
	}
	return nil
}

// healthy resets the backoff of sess's slot (a user's, or the shared one) after a request
// on sess succeeded.
func (p *Pool) healthy(sess *Session) {
	if sess.slot != nil {
		sess.slot.healthy(&p.users.mu)
		return
	}
	p.shared.healthy(&p.mu)
}

// died retires sess after a request found it dead.
func (p *Pool) died(sess *Session, cause error) {
	if sess.shared != nil {
		sess = sess.shared
	}
	p.mu.Lock()
	if p.shared.sess == sess {
		p.shared.sess = nil
		p.shared.fail(cause)
		p.Background(func() { _ = sess.Close() })
	}
	p.mu.Unlock()
	p.retireUserSession(sess, cause)
	p.cfg.Log.Warn("session lost", "err", cause, "stderr", p.tail(sess.Conn.Stderr()))
}

// tail is the end of a server's stderr that a log line shows.
func (p *Pool) tail(s string) string {
	if n := p.cfg.Limits.StderrTail; len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// closeWithin closes sess, waiting for the teardown no longer than ctx allows; the rest of
// it runs in the background (Close waits for it).
func (p *Pool) closeWithin(ctx context.Context, sess *Session) {
	done := make(chan struct{})
	p.Background(func() {
		_ = sess.Close()
		close(done)
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Background runs f, a teardown, an open or the host's background work, on its own
// goroutine. Close waits for such work (bounded), so that no process the server started
// outlives Close.
func (p *Pool) Background(f func()) {
	p.bgMu.Lock()
	p.bgN++
	p.bgMu.Unlock()
	go func() {
		defer func() {
			p.bgMu.Lock()
			p.bgN--
			if p.bgN == 0 && p.bgIdle != nil {
				close(p.bgIdle)
				p.bgIdle = nil
			}
			p.bgMu.Unlock()
		}()
		f()
	}()
}

// waitBackground waits until no background work runs, or d passed.
func (p *Pool) waitBackground(d time.Duration) {
	p.bgMu.Lock()
	if p.bgN == 0 {
		p.bgMu.Unlock()
		return
	}
	if p.bgIdle == nil {
		p.bgIdle = make(chan struct{})
	}
	idle := p.bgIdle
	p.bgMu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// Close ends the pool for good: later requests fail with ErrClosed. stop cancels
// Config.Life (in-flight requests and opens end with it). Teardowns of dead sessions, an
// interrupted open, the users' sessions and the saving of refreshed tokens (the server's
// grant and its users') finish alongside, each bounded by Limits.CloseWait. It returns the
// shared session's close error.
func (p *Pool) Close(stop func()) error {
	p.mu.Lock()
	p.closed = true
	sess := p.shared.sess
	p.shared.sess = nil
	p.mu.Unlock()
	stop()
	p.listens.clear()
	var wg sync.WaitGroup
	wg.Go(func() { p.waitBackground(p.cfg.Limits.CloseWait) })
	wg.Go(p.closeUsers)
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Limits.CloseWait)
		defer cancel()
		for _, h := range p.OAuthHandlers() {
			h.Flush(ctx)
		}
	})
	var err error
	if sess != nil {
		err = sess.Close()
	}
	wg.Wait()
	return err
}

// HeldLocks names the pool's locks that some goroutine holds now, for tests of the lock
// order (no log line is written under one of them).
func (p *Pool) HeldLocks() []string {
	var held []string
	for _, l := range []struct {
		name string
		mu   *sync.Mutex
	}{{"Pool.mu", &p.mu}, {"users.mu", &p.users.mu}, {"Pool.bgMu", &p.bgMu}, {"protocol.mu", &p.proto.mu}, {"listenHolds.mu", &p.listens.mu}} {
		if l.mu.TryLock() {
			l.mu.Unlock()
		} else {
			held = append(held, l.name)
		}
	}
	return held
}
