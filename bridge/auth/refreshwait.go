package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/oauth2"
)

// What a refresh of a grant in a TokenLocker store is doing (RefreshWaitError.Phase).
const (
	PhaseRefreshLock     = "waiting for the grant's lock (another replica holds it)"
	PhaseRefreshRead     = "reading the grant"
	PhaseRefreshEndpoint = "at the token endpoint"
	PhaseRefreshSave     = "saving the refreshed grant"
)

// RefreshWaitError is the error of a request that needed its grant refreshed (a TokenLocker
// store) and gave up waiting at its own deadline or cancellation, Err: the request never
// reached the server, and may be sent again later. The refresh goes on for the requests
// that still wait for it, bounded as ever; a lock left by a replica that crashed holds it
// until the lock expires. It wraps Err and, while the refresh waited for the store (every
// phase but PhaseRefreshEndpoint), ErrTokenStore.
type RefreshWaitError struct {
	Server string // the server's ID
	User   string // the user whose grant it is ("" for the host's own)
	Phase  string // what the refresh was doing: PhaseRefreshLock, ...
	Err    error  // the request's context's error
}

func (e *RefreshWaitError) Error() string {
	who := "the host's grant"
	if e.User != "" {
		who = fmt.Sprintf("user %q's grant", e.User)
	}
	return fmt.Sprintf("server %q: gave up waiting for the refresh of %s (%s): %v", e.Server, who, e.Phase, e.Err)
}

// Unwrap returns Err, and ErrTokenStore while the refresh waited for the store.
func (e *RefreshWaitError) Unwrap() []error {
	if e.Phase == PhaseRefreshEndpoint {
		return []error{e.Err}
	}
	return []error{e.Err, ErrTokenStore}
}

// RefreshNote keeps the *RefreshWaitError a request gave up with, for its caller: go-sdk
// reports a request whose context ended as that context's error alone (its wait for the
// answer sees the end first), so the caller reads why from the note (WithRefreshNote).
type RefreshNote struct {
	mu  sync.Mutex
	err *RefreshWaitError
}

type noteKey struct{}

// WithRefreshNote returns ctx with a new note that the requests made with it (and their
// transports, WrapTransport) leave their *RefreshWaitError in.
func WithRefreshNote(ctx context.Context) (context.Context, *RefreshNote) {
	n := &RefreshNote{}
	return context.WithValue(ctx, noteKey{}, n), n
}

// Err returns the *RefreshWaitError a request with n's context gave up with, or nil; nil n
// has none.
func (n *RefreshNote) Err() *RefreshWaitError {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// noteWait records rw in ctx's note, if it has one (the first error only).
func noteWait(ctx context.Context, rw *RefreshWaitError) {
	n, _ := ctx.Value(noteKey{}).(*RefreshNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		n.err = rw
	}
}

// refreshWait is WrapTransport's first step.
type refreshWait struct {
	h    *Handler
	next http.RoundTripper
}

func (t *refreshWait) RoundTrip(req *http.Request) (*http.Response, error) {
	t.h.mu.Lock()
	s, _ := t.h.ts.(*sharedSource)
	t.h.mu.Unlock()
	sent, bearer := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	// Only this source's own stale token is replaced: a request with another token (another
	// user's, on a connection shared with a stateless server) is not this handler's.
	if s == nil || !bearer || !s.stale(sent) {
		return t.next.RoundTrip(req)
	}
	tok, err := s.TokenContext(req.Context())
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		tok = nil // as go-sdk does: no token, so that the server's 401 starts Authorize
	case err != nil:
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	out := req.Clone(req.Context())
	if tok == nil {
		out.Header.Del("Authorization")
	} else {
		out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return t.next.RoundTrip(out)
}
