package auth

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// UserKey is the store key of user's grant for a server: Key for the host's own grant
// (user ""), else a hash of the length-prefixed fields, so that no two (server, client,
// type, user) tuples share a key whatever bytes the user ID holds, and the store never
// holds the user ID or the URL's query values in the clear.
func UserKey(serverURL, clientID, typ, user string) string {
	if user == "" {
		return Key(serverURL, clientID, typ)
	}
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, f := range []string{"mcpbridge user grant", serverURL, clientID, typ, user} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		h.Write([]byte(f))
	}
	return "u" + hex.EncodeToString(h.Sum(nil)[:20])
}

// Login runs the interactive authorization code flow at once (settings' Fetch does the
// person's part), whatever token is held: req is a request to the server, resp its 401
// (or a stand-in without a challenge: go-sdk then finds the protected resource metadata
// at its well-known URL). On success the new grant is saved and used from then on.
func (h *Handler) Login(ctx context.Context, req *http.Request, resp *http.Response) error {
	inner, err := h.interactive(ctx)
	if err != nil {
		resp.Body.Close()
		return err
	}
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return err
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ts = ts
	h.markLoaded()
	h.mu.Unlock()
	return nil
}

// fetcher is the person's part of the interactive flow: Fetch, else LoginFetch.
func (h *Handler) fetcher() sdkauth.AuthorizationCodeFetcher {
	if h.set.Fetch != nil {
		return h.set.Fetch
	}
	return h.set.LoginFetch
}

// Ensure reports whether the handler has a token for its user, reading the store when it
// has none yet (so that a grant another replica saved is found); a client credentials
// handler always has one to get. An error is the store's, not a missing grant.
func (h *Handler) Ensure(ctx context.Context) (bool, error) {
	if h.auth.Type != AuthOAuth {
		return true, nil
	}
	h.mu.Lock()
	has := h.ts != nil
	h.mu.Unlock()
	if has {
		return true, nil
	}
	// The store is read without the handler's lock (see the lock order on Handler).
	st, err := h.store.LoadToken(ctx, h.key)
	if err != nil {
		return false, fmt.Errorf("token store: %w", err)
	}
	var ts oauth2.TokenSource
	if st != nil && st.Token != nil {
		ts = h.persisting(st, st.config().TokenSource(h.tokenCtx(), st.Token))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.markLoaded()
	if h.ts == nil {
		h.ts = ts
	}
	return h.ts != nil, nil
}

// Settings returns the settings the handler was made with (Auth prepared), for a handler
// of the same server for another user.
func (h *Handler) Settings() Settings { return h.set }
