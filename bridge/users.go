package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/session"
)

// UserOptions makes a Set serve many users (Options.Users); zero fields mean the defaults.
// The host names the user of each call with WithUser (and of App proxy requests with
// ProxyUser). For a server with the OAuth authorization code flow (auth type oauth) that
// user's grant, OAuth handler, session (where the server keeps one) and catalogue (where the
// server asks for it) are the user's own:
//
//   - Grants are kept in the TokenStore under a key derived from the server, the client and
//     the user: a hash of length-prefixed fields, so no two users share a key whatever bytes
//     their IDs hold, and the store never holds a user ID in the clear. IDs are opaque bytes,
//     at most MaxUserIDBytes; errors and logs quote them.
//   - Each user's requests carry that user's token only: on a stateful server on the user's
//     own session, on a stateless one with the user's own OAuth handler.
//   - A user without a grant gets a *NeedsLoginError (wrapped in a *ServerError, wrapping
//     ErrNeedsLogin) at once, without contacting the server. Its AuthorizationURL starts that
//     user's authorization (discovery, registration, PKCE, state bound to the user and the
//     server; the flow waits LoginTimeout for its callback); the app's OAuth callback at
//     RedirectURL hands the redirect's query to Set.CompleteLogin with the user of its own
//     session (a callback for another user fails and ends the login). The user's next call
//     works; nothing else is reconnected. A refresh token revoked for one user makes that
//     user's calls fail with a *NeedsLoginError; other users are untouched.
//   - A call without a user on such a server is refused, so a forgotten WithUser never
//     borrows the host's grant. Server.ForgetUser logs a user out.
//
// What the server allows to be shared is shared, the rest is kept per user, each user's
// state bounded per server by MaxSessions (least recently used first out) and IdleTimeout,
// and rebuilt from the stored grant on the user's next call:
//
//   - Sessions are per user only where the server keeps state. A Streamable HTTP server that
//     negotiated 2025-11-25 or older holds a session (Mcp-Session-Id) with the token it was
//     opened with: each user gets a session of their own. A server on 2026-07-28 is
//     stateless, and tools are called with one POST each (the direct path): a user's call
//     goes on the shared connection with the user's OAuth handler, which supplies the user's
//     bearer token and refreshes it on a 401. The few requests of a user there that need
//     go-sdk's session (a call that runs as an MCP task or asks for input, resources/read,
//     prompts) open a session for the user on first need; listing a user's tools opens one
//     for the listing only.
//   - The catalogue (the tools the model sees) is listed once, when the server is connected,
//     without a user's credentials, and shared by every user (Set.Tools) unless the server
//     says otherwise: a listing with cacheScope "private" (2026-07-28, SEP-2549), or a
//     tools/list that needs a user's grant (401 without one), makes the server's catalogue
//     per user for the server's life. Set.ToolsFor gives a user the shared tools plus each
//     per-user server's listing made with that user's token: a public one (cacheScope
//     "public" or absent) listed once, with the first user's grant, for every user with one;
//     a private one (and every one after it) per user, for its ttlMs; each until a
//     tools/list_changed.
//   - A server that refuses even to start without a user's grant is kept, with no shared
//     session: if it keeps state, each user's requests go on the user's own session; if not,
//     on one connection opened with the first caller's grant, each call with its user's own
//     token (that user's logout closes it once the calls on it have ended).
//   - stdio servers stay shared: one process serves every user, since it carries the host's
//     environment and credentials rather than a user's. Servers without auth and client
//     credentials servers (the credentials are the host's) are shared too, catalogue
//     included.
//
// Replicas share grants and logins through a TokenStore that is also a TokenLocker and a
// LoginRelay (bridge/redisstore); package bridge/auth's "Web logins" says how.
type UserOptions struct {
	// RedirectURL is the web app's OAuth callback URL; the callback hands its query to
	// Set.CompleteLogin. Required to start logins (NeedsLoginError.AuthorizationURL).
	RedirectURL string
	// LoginTimeout is how long a started login waits for its callback (default:
	// DefaultLoginTimeout, in Limits: longer than a person takes on the
	// authorization server's pages).
	LoginTimeout time.Duration
	// MaxLoginFlows bounds the logins waiting for their callback, per server (default:
	// DefaultMaxLoginFlows).
	MaxLoginFlows int
	// MaxSessions bounds the users one server keeps state for (default:
	// DefaultMaxUserSessions): their OAuth handlers, sessions (on servers that keep state)
	// and catalogues (on servers whose catalogue is per user). Beyond it the least recently
	// used idle user's state is dropped, closing the session; it is rebuilt on the user's
	// next call, from the stored grant.
	MaxSessions int
	// IdleTimeout drops a user's state (and closes the session) unused this long (default:
	// DefaultUserIdleTimeout). Idle users are dropped when the server's users are next
	// looked at (any user's call).
	IdleTimeout time.Duration
	// RefreshJitter spreads the refreshes of grants in a store shared by replicas (a
	// TokenLocker): each grant is refreshed up to this much earlier than its expiry
	// requires, at random, so grants that expire together are not refreshed together; never
	// more than half the token's lifetime (default: DefaultRefreshJitter; <0: none).
	RefreshJitter time.Duration
	// ProxyUser names the user of an App proxy request (Set.ProxyHandler), e.g. from the
	// host's session cookie; an error answers 401 without calling anything. nil: proxy
	// requests carry the user their request context was given by the host's middleware
	// (WithUser), if any.
	ProxyUser func(*http.Request) (string, error)
}

// WithUser returns ctx naming the user a call is made for: every grant, OAuth handler and
// session of an AuthOAuth server is that user's (see UserOptions). The ID is opaque (any
// bytes, at most MaxUserIDBytes); a call with an invalid one fails before contacting
// anything (ValidateUserID).
func WithUser(ctx context.Context, id string) context.Context {
	return session.WithUser(ctx, id)
}

// UserFromContext returns the user WithUser put in ctx.
func UserFromContext(ctx context.Context) (string, bool) {
	return session.User(ctx)
}

// ErrInvalidUser is wrapped by the error of a call whose user ID is empty or too long.
var ErrInvalidUser = errors.New("invalid user ID")

// ValidateUserID checks a user ID: not empty, at most MaxUserIDBytes bytes. Any bytes are
// allowed (keys hash them; errors and logs quote them).
func ValidateUserID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidUser)
	case len(id) > MaxUserIDBytes:
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrInvalidUser, len(id), MaxUserIDBytes)
	}
	return nil
}

// NeedsLoginError is the error (wrapped in a *ServerError) of a call for a user who has no
// usable grant for the server: none stored, or the server refused it and it could not be
// refreshed. It wraps ErrNeedsLogin. A web app sends the user to AuthorizationURL.
type NeedsLoginError struct {
	Server string      // the server's ID
	User   string      // the user the call was for
	Reason LoginReason // why: ReasonNoGrant or ReasonGrantRefused

	s *Server
}

// Error says who must log in where, and why.
func (e *NeedsLoginError) Error() string {
	return fmt.Sprintf("user %q needs to authorize server %q: %s", e.User, e.Server, e.Reason)
}

// Unwrap returns ErrNeedsLogin.
func (e *NeedsLoginError) Unwrap() error { return ErrNeedsLogin }

// NeedsLogins returns every *NeedsLoginError in err's tree (Unwrap() error and
// Unwrap() []error, as ToolsFor's joined error has), in the order errors.As would find
// them, one per server and user: the logins a host sends its user to.
func NeedsLogins(err error) []*NeedsLoginError {
	type key struct{ server, user string }
	var out []*NeedsLoginError
	seen := map[key]bool{}
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *NeedsLoginError:
			if k := (key{e.Server, e.User}); !seen[k] {
				seen[k] = true
				out = append(out, e)
			}
		case interface{ Unwrap() []error }:
			for _, err := range e.Unwrap() {
				walk(err)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// AuthorizationURL starts the user's authorization of the server (Server.StartLogin) and
// returns the URL to send the user's browser to.
func (e *NeedsLoginError) AuthorizationURL(ctx context.Context) (string, error) {
	if e.s == nil {
		return "", errors.New("this error cannot start a login")
	}
	return e.s.StartLogin(ctx, e.User)
}

// ForgetUser deletes user's stored grant for the server and closes the user's session
// (a logout). A server without per-user grants has nothing to forget.
func (s *Server) ForgetUser(ctx context.Context, user string) error {
	if err := ValidateUserID(user); err != nil {
		return err
	}
	if !s.perUser {
		return nil
	}
	s.pool.Forget(user)
	st := s.oauth.Settings()
	if err := st.Store.DeleteToken(ctx, auth.UserKey(st.URL, st.Auth.ClientID, st.Auth.Type, user)); err != nil {
		return &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: fmt.Errorf("user %q: forgetting the grant: %w", user, err)}
	}
	return nil
}

// UserSessions is how many per-user sessions the server holds open.
func (s *Server) UserSessions() int { return s.pool.UserSessions() }

// proxyUser puts the user UserOptions.ProxyUser names into each App proxy request's
// context; a request it names no valid user for is answered 401.
func (set *Set) proxyUser(next http.Handler) http.Handler {
	if set.users == nil || set.users.ProxyUser == nil {
		return next
	}
	name := set.users.ProxyUser
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, err := name(r)
		if err == nil {
			err = ValidateUserID(user)
		}
		if err != nil {
			http.Error(w, "no user for this request", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), user)))
	})
}
