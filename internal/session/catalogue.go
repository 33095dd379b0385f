package session

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-user catalogues. A per-user server's catalogue is kept per user once the host finds
// the shared listing refused for want of a user's grant, or marked private (MakePrivate,
// UsersOnly); each user's listing is then cached in the user's state (bounded with it) as an
// opaque value of the host's, fresh for as long as the listing said.

// CacheScopePrivate is SEP-2549's cacheScope of a result only its requester may cache.
const CacheScopePrivate = "private"

// ListInfo is what a listing's pages said about caching it (SEP-2549).
type ListInfo struct {
	Private bool          // a page had cacheScope "private"
	TTL     time.Duration // the shortest ttlMs of its pages (0: stale at once)
}

// Note records one page's cache fields.
func (li *ListInfo) Note(page int, c mcp.Cacheable) {
	if c.CacheScope == CacheScopePrivate {
		li.Private = true
	}
	ttl := time.Duration(max(c.TTLMs, 0)) * time.Millisecond
	if page == 0 || ttl < li.TTL {
		li.TTL = ttl
	}
}

// PrivateCatalogues reports whether the server's catalogue is per user.
func (p *Pool) PrivateCatalogues() bool { return p.users.private.Load() }

// MakePrivate makes the server's catalogue per user, for the server's life; it reports
// whether it was shared until now.
func (p *Pool) MakePrivate() bool { return !p.users.private.Swap(true) }

// PrivateListing decides, after the shared session's listing, whether the catalogue is per
// user from then on (MakePrivate, logged once): on a per-user pool that serves users, when
// the listing was refused for want of a user's grant (err, needsLogin: it wraps the
// needs-login error) or came back with cacheScope "private" (li).
func (p *Pool) PrivateListing(err error, needsLogin bool, li ListInfo) bool {
	if !p.cfg.PerUser || !p.cfg.ServeUsers {
		return false
	}
	why := ""
	switch {
	case err != nil && needsLogin:
		why = "tools/list needs a user's grant"
	case err == nil && li.Private:
		why = `tools/list answered with cacheScope "private"`
	default:
		return false
	}
	if p.MakePrivate() {
		p.cfg.Log.Info("the server's catalogue is per user", "reason", why)
	}
	return true
}

// UsersOnly marks the server as one that opens only with a user's grant: no shared session,
// its catalogue per user, each user's requests on the user's own session.
func (p *Pool) UsersOnly() {
	p.users.private.Store(true)
	p.users.noShared.Store(true)
}

// StatelessShared reports whether the server's shared session is stateless
// (Session.Stateless), or, for a server with no shared session, whether none of its sessions
// was found to keep state.
func (p *Pool) StatelessShared() bool {
	if p.users.noShared.Load() {
		return !p.users.stateful.Load() // until a session of it was found to keep state (ListOnce)
	}
	sess := p.Current()
	return sess != nil && sess.Stateless()
}

// UserCatalogue returns user id's catalogue: the users' shared one once a user's listing
// was public (cacheScope "public" or absent: any user may be served it), after checking that
// id has a grant (else the host's NeedsLogin, without contacting the server); else the
// user's own cached one when it is fresh (or, with stale, whatever its age); else the one
// list makes, on its own goroutine (once, shared by the user's concurrent callers) with ctx
// naming the user and bounded by the connect timeout and by Close. Until a user's listing
// was private, one listing at a time may become every user's: another user waits for it
// rather than listing too. list returns the catalogue and what its pages said (ListInfo).
//
// A public catalogue is kept until a tools/list_changed (ToolsChanged), as the shared
// catalogue listed without a user is; a private one is fresh for its TTL. Once a user's
// listing was private, every user's is the user's own, for the server's life.
func (p *Pool) UserCatalogue(ctx context.Context, id string, stale bool, list func(ctx context.Context) (any, ListInfo, error)) (any, error) {
	t := &p.users
	for {
		t.mu.Lock()
		if p.cfg.Life.Err() != nil {
			t.mu.Unlock()
			return nil, ErrClosed
		}
		u := p.user(id)
		if c := t.pub; c != nil {
			u.busy++ // the handler is not evicted while it reads the grant
			t.mu.Unlock()
			err := p.hasGrant(ctx, u)
			p.release(u)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
		if c := u.cat; c != nil && (stale || time.Now().Before(u.expires)) {
			t.mu.Unlock()
			return c, nil
		}
		if l := t.pubListing; l != nil && l.user != u {
			t.mu.Unlock()
			select {
			case <-l.done: // public: served above; else this user lists
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		l := u.listing
		if l == nil {
			l = &catListing{user: u, gen: u.catGen, pubGen: t.pubGen, done: make(chan struct{})}
			u.listing = l
			if !t.ownOnly {
				t.pubListing = l
			}
			u.busy++ // kept while it lists
			p.Background(func() { p.listUser(u, l, list) })
		}
		t.mu.Unlock()
		select {
		case <-l.done:
			return l.cat, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// listUser makes u's catalogue with list and keeps it: as every user's when it is public and
// no user's listing was private, else as u's own; unless a change made it stale meanwhile.
func (p *Pool) listUser(u *userState, l *catListing, list func(context.Context) (any, ListInfo, error)) {
	ctx, cancel := context.WithTimeout(WithUser(p.cfg.Life, u.id), p.cfg.ConnectTimeout)
	defer cancel()
	c, li, err := list(ctx)
	if err != nil {
		c = nil
	}
	t := &p.users
	t.mu.Lock()
	u.listing = nil
	u.busy--
	if c != nil && li.Private {
		t.ownOnly = true
	}
	switch {
	case c == nil:
	case !t.ownOnly:
		if t.pubListing == l && t.pubGen == l.pubGen {
			t.pub = c
		}
	case u.catGen == l.gen:
		u.cat, u.expires = c, time.Now().Add(li.TTL)
	}
	if t.pubListing == l {
		t.pubListing = nil
	}
	l.cat, l.err = c, err
	t.mu.Unlock()
	close(l.done)
}

// ToolsChanged drops the users' catalogues a tools/list_changed on session cs makes stale:
// the shared public one, and its user's, or every user's when cs is not a user's session. Each is listed again
// when next needed.
func (p *Pool) ToolsChanged(cs *mcp.ClientSession) {
	if !p.users.private.Load() {
		return
	}
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	p.users.pub = nil // the server's, whichever session announced the change
	p.users.pubGen++
	for _, u := range p.users.m {
		if u.slot.sess != nil && u.slot.sess.CS == cs {
			u.cat = nil
			u.catGen++
			return
		}
	}
	for _, u := range p.users.m {
		u.cat = nil
		u.catGen++
	}
}

// ListOnce runs list on a session opened for it with user's token and closed after it: a
// stateless server keeps no session for a user, and neither does the pool. Errors are the
// host's (Host.Fail, phase tools/list).
func (p *Pool) ListOnce(ctx context.Context, user string, list func(context.Context, *Session) error) error {
	p.users.mu.Lock()
	if p.cfg.Life.Err() != nil {
		p.users.mu.Unlock()
		return p.cfg.Host.Fail(phaseList, ErrClosed, nil)
	}
	u := p.user(user)
	u.busy++
	p.users.mu.Unlock()
	defer p.release(u)
	sess, err := p.dialUser(ctx, u)
	if err == nil {
		if p.users.noShared.Load() && !sess.Stateless() {
			p.users.stateful.Store(true) // its users' requests go on their own sessions
		}
		err = list(ctx, sess)
		p.Background(func() { _ = sess.Close() })
	}
	if err != nil {
		if f := p.cfg.Host.AsFail(err); f != nil {
			return f
		}
		return p.cfg.Host.Fail(phaseList, fmt.Errorf("tools/list: %w", p.userErr(user, err)), nil)
	}
	return nil
}
