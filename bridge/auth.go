package bridge

import (
	"context"
	"log/slog"

	"github.com/ttalk/mcpbridge/bridge/auth"
)

// OAuth is package bridge/auth's: its public types are aliased here (the os / io/fs
// precedent) so that hosts need only import bridge; what follows is the wiring of a
// server's OAuth handler.

// The kinds of AuthConfig.Type (see bridge/auth).
const (
	AuthOAuth             = auth.AuthOAuth
	AuthClientCredentials = auth.AuthClientCredentials
	AuthWorkloadIdentity  = auth.AuthWorkloadIdentity
	AuthEnterprise        = auth.AuthEnterprise
)

// The values of AuthConfig.DPoP (see bridge/auth).
const (
	DPoPAuto = auth.DPoPAuto
	DPoPOn   = auth.DPoPOn
	DPoPOff  = auth.DPoPOff
)

// The values of NeedsLoginError.Reason (see bridge/auth).
const (
	ReasonNoGrant      = auth.ReasonNoGrant
	ReasonGrantRefused = auth.ReasonGrantRefused
)

type (
	// LoginReason is auth.LoginReason: why a user must log in (NeedsLoginError.Reason).
	LoginReason = auth.LoginReason
	// AuthConfig is auth.AuthConfig: how the bridge authorizes to a Streamable HTTP server
	// that requires OAuth.
	AuthConfig = auth.AuthConfig
	// Authorizer is auth.Authorizer: the interactive step of the authorization code flow.
	Authorizer = auth.Authorizer
	// TokenStore is auth.TokenStore: where OAuth tokens are kept between runs.
	TokenStore = auth.TokenStore
	// TokenLocker is auth.TokenLocker: a TokenStore shared by replicas that locks a key
	// across them.
	TokenLocker = auth.TokenLocker
	// LoginRelay is auth.LoginRelay: a TokenStore that carries a login's callback to the
	// replica whose flow waits for it.
	LoginRelay = auth.LoginRelay
	// StoredToken is auth.StoredToken: one server's OAuth grant as kept in a TokenStore.
	StoredToken = auth.StoredToken
	// AuthStatus is auth.AuthStatus: what probe shows about a server's OAuth grant.
	AuthStatus = auth.AuthStatus
	// FileTokenStore is auth.FileTokenStore: tokens in one JSON file readable only by its
	// owner.
	FileTokenStore = auth.FileTokenStore
)

// ErrNeedsLogin is auth.ErrNeedsLogin: wrapped by the error of a server that requires OAuth
// when no usable token is stored and no Authorizer is given.
var ErrNeedsLogin = auth.ErrNeedsLogin

// ErrTokenStore is auth.ErrTokenStore: wrapped by the error of a request whose grant the
// failing TokenStore could not give (a store outage, not a missing login: retry later).
var ErrTokenStore = auth.ErrTokenStore

// ErrLoginUnknown is auth.ErrLoginUnknown: wrapped by CompleteLogin's error for a state that
// no login is waiting for (never started here, already completed, or expired).
var ErrLoginUnknown = auth.ErrLoginUnknown

// DefaultTokenStore is auth.DefaultTokenStore: the per-user token file.
func DefaultTokenStore() (*FileTokenStore, error) { return auth.DefaultTokenStore() }

// Logout forgets the stored OAuth grant of cfg in store (no-op when there is none or cfg has
// no OAuth). A nil store means DefaultTokenStore(), as for Options.TokenStore.
func Logout(ctx context.Context, cfg ServerConfig, store TokenStore) error {
	return auth.Logout(ctx, cfg.URL, cfg.Auth, store)
}

// newOAuthHandler is the OAuth handler of cfg (cfg.Auth set), with o's store, HTTP client
// and Authorizer.
func newOAuthHandler(cfg ServerConfig, o *options, log *slog.Logger) (*auth.Handler, error) {
	st := auth.Settings{ID: cfg.ID, URL: cfg.URL, Store: o.TokenStore, HTTPClient: o.HTTPClient, Log: log}
	if o.Authorizer != nil {
		st.RedirectURL, st.Fetch = o.Authorizer.RedirectURL, o.Authorizer.Fetch
	}
	if o.Users != nil { // one process refreshes its own grants when they are due
		st.RefreshJitter = max(o.users.RefreshJitter, 0)
	}
	return auth.Open(*cfg.Auth, st)
}
