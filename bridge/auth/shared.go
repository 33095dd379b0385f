package auth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// A store shared by replicas (a TokenLocker) changes how a grant is refreshed: a refresh token
// that rotates may be spent once, so a refresh takes the store's lock on the grant's key,
// re-reads the grant (another replica may have refreshed it meanwhile: then that token is
// used) and only then spends the refresh token, saving the result before unlocking. Access
// tokens are refreshed proactively, a random part of Settings.RefreshJitter before they
// expire, so that grants that expire together (a deployment, a burst of logins) are not
// all refreshed in the same second. That part is at most half the token's lifetime (as this
// process first saw it), so a short-lived token is still used for half its life before it is
// refreshed, never refreshed on every call.
//
// A refresh whose save failed (the store went down after the refresh token was spent) leaves
// the store holding the spent refresh token: the refreshed grant lives only in this process
// (unsaved). Until it is saved, it is the grant: a later refresh under the lock saves it in
// place of the store's, whose refresh token would be refused (and the user sent to a login
// although the grant is fine), and so does a source made for a refused token
// (refreshShared).

const (
	expiryDelta = 10 * time.Second // a token this close to its expiry is refreshed (as oauth2 does)
	lockTTL     = 60 * time.Second // longer than a refresh may take (refreshTimeout + the store)
	// refreshTimeout bounds one refresh: waiting for the lock, the store, the token endpoint.
	refreshTimeout = 30 * time.Second
)

// sharedSource is the token source of a grant in a TokenLocker store.
type sharedSource struct {
	h     *Handler
	lock  TokenLocker
	share float64 // this grant's share of the jitter, in [0, 1)

	mu         sync.Mutex // guards the fields below; a leaf: nothing is called while it is held
	g          StoredToken
	life       time.Duration  // g's access token's lifetime when this process took it (0: no expiry)
	bad        string         // an access token the server refused: never adopted again
	refreshing *refreshFlight // the refresh in progress in this process, shared by its callers
	// unsaved is the refresh token the store still holds, spent by the refresh that gave g,
	// while g is not saved ("": g is saved).
	unsaved string
}

// unsavedGrant returns the grant s refreshed and could not save, and the spent refresh
// token the store holds in its place; ok is false when s's grant is saved.
func (s *sharedSource) unsavedGrant() (g StoredToken, spent string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g, s.unsaved, s.unsaved != ""
}

func (h *Handler) shared(st *StoredToken, bad string) *sharedSource {
	lk, _ := h.store.(TokenLocker)
	return &sharedSource{h: h, lock: lk, g: *st, bad: bad, life: lifetime(st.Token), share: rand.Float64()}
}

// lifetime is how long t is valid from now (0 when it has no expiry).
func lifetime(t *oauth2.Token) time.Duration {
	if t == nil || t.Expiry.IsZero() {
		return 0
	}
	return max(time.Until(t.Expiry), 0)
}

// earlyBy is how long before its expiry a token is refreshed beyond expiryDelta: share of
// jitter, where jitter is at most half the token's lifetime life (when known).
func earlyBy(share float64, jitter, life time.Duration) time.Duration {
	if jitter <= 0 {
		return 0
	}
	if life > 0 {
		jitter = min(jitter, life/2)
	}
	return time.Duration(share * float64(jitter))
}

// fresh reports whether t may be used as it is; life is the lifetime of the grant's token
// (see sharedSource.life).
func (s *sharedSource) fresh(t *oauth2.Token, bad string, life time.Duration) bool {
	return t != nil && t.AccessToken != "" && t.AccessToken != bad &&
		(t.Expiry.IsZero() || time.Until(t.Expiry) > expiryDelta+earlyBy(s.share, s.h.set.RefreshJitter, life))
}

// Token returns the grant's access token without waiting for a refresh: go-sdk asks for it
// under its connection's lock, with no request's context. A token that needs refreshing
// starts the refresh (one at a time in this process, shared by its callers) and is returned
// as it is, unless it is unusable (none, or refused): then Token waits as long as the refresh
// may take. The request it goes out with waits for the refresh at its own deadline in the
// handler's transport (WrapTransport) and carries the new token.
func (s *sharedSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	if s.fresh(s.g.Token, s.bad, s.life) {
		tok := s.g.Token
		s.mu.Unlock()
		return tok, nil
	}
	s.start()
	if t := s.g.Token; t != nil && t.AccessToken != "" && t.AccessToken != s.bad {
		s.mu.Unlock()
		return t, nil
	}
	s.mu.Unlock()
	return s.TokenContext(context.Background()) // bounded by refreshTimeout
}

// TokenContext returns the grant's access token, refreshing it under the store's lock when it
// is about to expire: one refresh at a time in this process, shared by the callers that need
// it (the store is called without the source's lock). A caller waits for the refresh only
// until ctx ends, and then gets a *RefreshWaitError; the refresh goes on for the others
// (bounded by refreshTimeout).
func (s *sharedSource) TokenContext(ctx context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	if s.fresh(s.g.Token, s.bad, s.life) {
		tok := s.g.Token
		s.mu.Unlock()
		return tok, nil
	}
	f := s.start()
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		rw := &RefreshWaitError{Server: s.h.set.ID, User: s.h.set.User, Phase: f.phase.Load().(string), Err: ctx.Err()}
		noteWait(ctx, rw)
		return nil, rw
	}
}

// stale reports whether tok is this source's token and is due for the refresh a request
// with it must wait for.
func (s *sharedSource) stale(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.g.Token != nil && tok == s.g.Token.AccessToken && !s.fresh(s.g.Token, s.bad, s.life)
}

// refreshFlight is a refresh of a shared grant: done is closed when it ended with tok or err;
// phase is what it is doing (RefreshWaitError.Phase).
type refreshFlight struct {
	done  chan struct{}
	phase atomic.Value // string
	tok   *oauth2.Token
	err   error
}

// start returns the refresh in progress, starting one when there is none; s.mu is held.
func (s *sharedSource) start() *refreshFlight {
	if s.refreshing != nil {
		return s.refreshing
	}
	f := &refreshFlight{done: make(chan struct{})}
	f.phase.Store(PhaseRefreshLock)
	s.refreshing = f
	g, bad, unsaved := s.g, s.bad, s.unsaved
	go func() {
		ng, unsaved, err := s.refresh(f, g, bad, unsaved)
		s.mu.Lock()
		if err == nil {
			s.life = lifetime(ng.Token)
			s.g, s.unsaved = ng, unsaved
			if ng.Token.AccessToken != bad {
				s.bad = ""
			}
			f.tok = ng.Token
		}
		s.refreshing = nil
		s.mu.Unlock()
		f.err = err
		close(f.done)
	}()
	return f
}

// refresh gets a fresh grant for g under the store's lock: the stored one when another
// replica refreshed it meanwhile, else g refreshed and saved. unsaved is the spent refresh
// token the store holds while g is not saved (""); refresh returns the grant and, when it
// could not be saved, the refresh token the store still holds in its place.
func (s *sharedSource) refresh(f *refreshFlight, g StoredToken, bad, unsaved string) (StoredToken, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	unlock, err := s.lock.LockToken(ctx, s.h.key, lockTTL)
	if err != nil {
		return g, unsaved, fmt.Errorf("%w: locking the grant for its refresh: %w", ErrTokenStore, err)
	}
	defer unlock()
	f.phase.Store(PhaseRefreshRead)
	// The grant as stored now: another replica may have refreshed it (and spent the
	// refresh token this process holds).
	st, err := s.h.store.LoadToken(ctx, s.h.key)
	if err != nil {
		return g, unsaved, fmt.Errorf("%w: reading the grant for its refresh: %w", ErrTokenStore, err)
	}
	switch {
	case unsaved != "" && st != nil && st.Token != nil && st.Token.RefreshToken == unsaved:
		// The store still holds what this process refreshed: ours is the grant.
		if err := s.h.store.SaveToken(ctx, s.h.key, &g); err == nil {
			unsaved = ""
		}
		if s.fresh(g.Token, bad, lifetime(g.Token)) {
			return g, unsaved, nil
		}
	case st != nil && st.Token != nil:
		g, unsaved = *st, "" // a login, or another replica's refresh, since
		if s.fresh(st.Token, bad, lifetime(st.Token)) {
			return g, "", nil
		}
	}
	if g.Token == nil || g.Token.RefreshToken == "" {
		return g, unsaved, errors.New("the access token expired and no refresh token is kept")
	}
	stored := g.Token.RefreshToken // what the store holds, unless ours was not saved
	if unsaved != "" {
		stored = unsaved
	}
	stale := *g.Token
	stale.AccessToken = "" // so that oauth2 refreshes
	f.phase.Store(PhaseRefreshEndpoint)
	rctx := context.WithValue(ctx, oauth2.HTTPClient, s.h.hc)
	tok, err := g.config().TokenSource(rctx, &stale).Token()
	if err != nil {
		return g, unsaved, err
	}
	g.Token = tok
	saved := g
	f.phase.Store(PhaseRefreshSave)
	if err := s.h.store.SaveToken(ctx, s.h.key, &saved); err != nil {
		// The new refresh token is lost to the other replicas; this one keeps using it and
		// saves it at its next refresh (unsaved).
		s.h.log.Warn("saving the refreshed OAuth token failed", "err", err)
		return g, stored, nil
	}
	return g, "", nil
}

// refreshShared is refreshNow for a TokenLocker store: bad, the access token the server refused,
// is never adopted again; the grant is refreshed under the lock unless another caller or
// replica already did.
func (h *Handler) refreshShared(ctx context.Context, bad string) (bool, error) {
	st, err := h.store.LoadToken(ctx, h.key)
	if err != nil {
		return false, fmt.Errorf("%w: reading the grant: %w", ErrTokenStore, err)
	}
	if st == nil || st.Token == nil || !h.dpop.useStored(st) {
		return false, nil
	}
	// The grant this process refreshed and could not save is newer than the store's.
	h.mu.Lock()
	cur, _ := h.ts.(*sharedSource)
	h.mu.Unlock()
	var unsaved string
	if cur != nil {
		if g, spent, ok := cur.unsavedGrant(); ok && st.Token.RefreshToken == spent {
			st, unsaved = &g, spent
		}
	}
	ts := h.shared(st, bad)
	ts.unsaved = unsaved
	if _, err := ts.TokenContext(ctx); err != nil {
		h.log.Debug("refreshing the OAuth token failed", "err", err)
		if rw := (*RefreshWaitError)(nil); errors.Is(err, ErrTokenStore) || errors.As(err, &rw) {
			return false, err
		}
		return false, nil
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true, nil
}
