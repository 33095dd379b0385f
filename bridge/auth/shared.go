package auth

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
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
	life       time.Duration // g's access token's lifetime when this process took it (0: no expiry)
	bad        string        // an access token the server refused: never adopted again
	refreshing *flight       // the refresh in progress in this process, shared by its callers
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

// Token returns the grant's access token, refreshing it under the store's lock when it is
// about to expire: one refresh at a time in this process, shared by the callers that need
// it (the store is called without the source's lock).
func (s *sharedSource) Token() (*oauth2.Token, error) {
	for {
		s.mu.Lock()
		if s.fresh(s.g.Token, s.bad, s.life) {
			tok := s.g.Token
			s.mu.Unlock()
			return tok, nil
		}
		f := s.refreshing
		lead := f == nil
		if lead {
			f = &flight{done: make(chan struct{})}
			s.refreshing = f
		}
		g, bad := s.g, s.bad
		s.mu.Unlock()
		if !lead {
			<-f.done // bounded by refreshTimeout
			if f.err != nil {
				return nil, f.err
			}
			continue
		}
		ng, err := s.refresh(g, bad)
		s.mu.Lock()
		if err == nil {
			s.life = lifetime(ng.Token)
			s.g = ng
			if ng.Token.AccessToken != bad {
				s.bad = ""
			}
		}
		s.refreshing = nil
		s.mu.Unlock()
		f.err = err
		close(f.done)
		if err != nil {
			return nil, err
		}
		return ng.Token, nil
	}
}

// refresh gets a fresh grant for g under the store's lock: the stored one when another
// replica refreshed it meanwhile, else g refreshed and saved.
func (s *sharedSource) refresh(g StoredToken, bad string) (StoredToken, error) {
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	unlock, err := s.lock.LockToken(ctx, s.h.key, lockTTL)
	if err != nil {
		return g, fmt.Errorf("%w: locking the grant for its refresh: %w", ErrTokenStore, err)
	}
	defer unlock()
	// The grant as stored now: another replica may have refreshed it (and spent the
	// refresh token this process holds).
	st, err := s.h.store.LoadToken(ctx, s.h.key)
	if err != nil {
		return g, fmt.Errorf("%w: reading the grant for its refresh: %w", ErrTokenStore, err)
	}
	if st != nil && st.Token != nil {
		g = *st
		if s.fresh(st.Token, bad, lifetime(st.Token)) {
			return g, nil
		}
	}
	if g.Token == nil || g.Token.RefreshToken == "" {
		return g, errors.New("the access token expired and no refresh token is kept")
	}
	stale := *g.Token
	stale.AccessToken = "" // so that oauth2 refreshes
	rctx := context.WithValue(ctx, oauth2.HTTPClient, s.h.hc)
	tok, err := g.config().TokenSource(rctx, &stale).Token()
	if err != nil {
		return g, err
	}
	g.Token = tok
	saved := g
	if err := s.h.store.SaveToken(ctx, s.h.key, &saved); err != nil {
		// The new refresh token is lost to the other replicas; this one keeps using it.
		s.h.log.Warn("saving the refreshed OAuth token failed", "err", err)
	}
	return g, nil
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
	ts := h.shared(st, bad)
	if _, err := ts.Token(); err != nil {
		h.log.Debug("refreshing the OAuth token failed", "err", err)
		if errors.Is(err, ErrTokenStore) {
			return false, err
		}
		return false, nil
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true, nil
}
