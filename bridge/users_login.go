package bridge

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/ttalk/mcpbridge/bridge/auth"
)

// A web host's login is bridge/auth's login engine (auth.Logins, package doc "Web logins"):
// each server has one, and the methods here delegate to it.

// newLogins is the login engine of s (once s's OAuth handler is made).
func newLogins(s *Server) *auth.Logins {
	relay, _ := s.opts.TokenStore.(LoginRelay)
	if !s.perUser {
		relay = nil
	}
	return auth.NewLogins(auth.LoginSettings{
		Server: s.cfg.ID, URL: s.cfg.URL, HTTPClient: s.opts.HTTPClient, ChallengeTimeout: s.opts.connectTimeout(s.cfg),
		Timeout: s.opts.users.LoginTimeout, Max: s.opts.users.MaxLoginFlows,
		Relay: relay, Complete: s.CompleteLogin,
		Life: s.life, Go: func(f func()) { s.pool.Background(f) }, Log: s.log,
		Fail: func(err error) error { return &ServerError{Server: s.cfg.ID, Phase: PhaseLogin, Err: err} },
	})
}

// StartLogin starts user's authorization of the server and returns the URL to send the
// user's browser to; the web app's callback at UserOptions.RedirectURL then calls
// CompleteLogin (Set.CompleteLogin) with the same user. ctx bounds the wait for the URL
// (discovery and client registration), not the flow.
func (s *Server) StartLogin(ctx context.Context, user string) (string, error) {
	if err := ValidateUserID(user); err != nil {
		return "", err
	}
	if !s.perUser {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseLogin, Err: errors.New("login: the server has no per-user OAuth (auth type oauth)")}
	}
	if s.opts.Users == nil || s.opts.Users.RedirectURL == "" {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseLogin, Err: errors.New("login: Options.Users.RedirectURL is not set")}
	}
	if s.life.Err() != nil {
		return "", ErrServerClosed
	}
	return s.logins.Start(ctx, user, func() (*auth.Handler, error) {
		if s.life.Err() != nil {
			return nil, ErrServerClosed
		}
		return s.pool.UserHandler(user), nil
	})
}

// CompleteLogin finishes the login StartLogin began for user, with the query of the
// redirect to the web app's callback (code, state, iss; or error). It returns once the
// user's grant is stored, or why not; an error wrapping ErrLoginUnknown when no login of
// this server waits for the state. A callback for a user other than the one the login was
// started for fails and ends that login.
func (s *Server) CompleteLogin(ctx context.Context, user string, query url.Values) error {
	return s.logins.Complete(ctx, user, query)
}

// StartLogin is Server.StartLogin on the server whose ID or hash is serverID.
func (set *Set) StartLogin(ctx context.Context, user, serverID string) (string, error) {
	s, ok := set.Lookup(serverID)
	if !ok {
		return "", fmt.Errorf("login: no server %q", serverID)
	}
	return s.StartLogin(ctx, user)
}

// CompleteLogin is Server.CompleteLogin on the server whose login waits for the query's
// state. When no login of this Set waits for it and the TokenStore is a LoginRelay, the
// callback is relayed to the replica whose login does, and its outcome returned (an error
// from there comes back as text).
func (set *Set) CompleteLogin(ctx context.Context, user string, query url.Values) error {
	servers := set.Servers()
	ls := make([]*auth.Logins, len(servers))
	for i, s := range servers {
		ls[i] = s.logins
	}
	return auth.CompleteAny(ctx, user, query, ls, ValidateUserID)
}
