package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A web host's login: StartLogin runs the user's authorization code flow (go-sdk's auth
// package: discovery, registration, PKCE, resource, issuer checks) on a goroutine of its
// own until it needs the person; the flow's authorization URL, whose state parameter is
// bound to the user and the server, goes back to the web app; the web app's OAuth callback
// hands the redirect's query to CompleteLogin, which gives the flow its code and waits for
// the token exchange. A flow waits at most UserOptions.LoginTimeout, and flows are bounded
// in number (UserOptions.MaxLoginFlows). Flows live in the process that started them; with
// a TokenStore that is a LoginRelay (bridge/redisstore), the callback may reach any replica:
// Set.CompleteLogin relays it to the replica that holds the flow and returns its outcome.
// The grant itself is in the shared TokenStore.

// ErrLoginUnknown is wrapped by CompleteLogin's error for a state that no login is waiting
// for: never started here, already completed, or expired.
var ErrLoginUnknown = errors.New("no login is waiting for this state (unknown, completed or expired)")

// loginFlow is one user's login on one server, waiting for its callback.
type loginFlow struct {
	user   string
	urlc   chan string                    // the authorization URL, once known
	result chan *auth.AuthorizationResult // the callback's code and state
	cancel chan error                     // the callback's refusal
	done   chan struct{}                  // closed when the flow ended
	err    error                          // its outcome; valid once done is closed
}

type loginCtxKey struct{}

// LoginRelay is a TokenStore shared by the replicas of a web host that also carries a
// login's callback to the replica whose flow waits for it, so that the web app's OAuth
// callback may land on any replica (Set.CompleteLogin). bridge/redisstore is one.
// Implementations see a hash of the login's state, never the state itself, and must not
// put the callback's query (its code) in errors or logs.
type LoginRelay interface {
	TokenStore
	// HoldLogin announces, for at most ttl, that this process waits for the callback of
	// the login whose ID is id, and hands each callback another process relays for it
	// (RelayLogin) to complete, sending complete's error back. release withdraws the
	// announcement. ctx bounds HoldLogin itself.
	HoldLogin(ctx context.Context, id string, ttl time.Duration, complete func(ctx context.Context, user string, query url.Values) error) (release func(), err error)
	// RelayLogin hands a callback (the user of the web app's session and the redirect's
	// query) to the process holding the login id and returns complete's outcome there:
	// nil once the user's grant is stored; an error wrapping ErrLoginUnknown when no
	// process holds the login (never started, already completed, expired). Its wait is
	// bounded, within ctx.
	RelayLogin(ctx context.Context, id, user string, query url.Values) error
}

// loginID is what a LoginRelay knows a login by: a hash of its state.
func loginID(state string) string {
	sum := sha256.Sum256([]byte("mcpbridge login\x00" + state))
	return hex.EncodeToString(sum[:])
}

// relayedQuery is the part of a callback's query a login uses, bounded.
func relayedQuery(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range []string{"code", "state", "iss", "error", "error_description"} {
		if v := q.Get(k); v != "" {
			if len(v) > maxCallbackValue {
				v = v[:maxCallbackValue+1] // still too long: refused where the flow is
			}
			out.Set(k, v)
		}
	}
	return out
}

func (o *UserOptions) loginTimeout() time.Duration {
	if o == nil || o.LoginTimeout <= 0 {
		return DefaultLoginTimeout
	}
	return o.LoginTimeout
}

func (o *UserOptions) maxFlows() int {
	if o == nil || o.MaxLoginFlows <= 0 {
		return DefaultMaxLoginFlows
	}
	return o.MaxLoginFlows
}

// StartLogin starts user's authorization of the server and returns the URL to send the
// user's browser to; the web app's callback at UserOptions.RedirectURL then calls
// CompleteLogin (Set.CompleteLogin) with the same user. ctx bounds the wait for the URL
// (discovery and client registration), not the flow.
func (s *Server) StartLogin(ctx context.Context, user string) (string, error) {
	if err := ValidateUserID(user); err != nil {
		return "", err
	}
	if !s.perUser() {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: errors.New("login: the server has no per-user OAuth (auth type oauth)")}
	}
	if s.opts.Users == nil || s.opts.Users.RedirectURL == "" {
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: errors.New("login: Options.Users.RedirectURL is not set")}
	}
	s.users.mu.Lock()
	if s.life.Err() != nil {
		s.users.mu.Unlock()
		return "", errServerClosed
	}
	if len(s.users.flows) >= s.opts.Users.maxFlows() {
		s.users.mu.Unlock()
		return "", &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: fmt.Errorf("login: %d logins are already waiting for their callback (UserOptions.MaxLoginFlows)", len(s.users.flows))}
	}
	h := s.user(user).h
	s.users.mu.Unlock()

	f := &loginFlow{user: user, urlc: make(chan string, 1), result: make(chan *auth.AuthorizationResult, 1), cancel: make(chan error, 1), done: make(chan struct{})}
	fctx, cancel := context.WithTimeout(s.life, s.opts.Users.loginTimeout())
	fctx = context.WithValue(fctx, loginCtxKey{}, f)
	s.background(func() {
		defer cancel()
		req, resp, err := s.challenge(fctx)
		if err == nil {
			err = h.Login(fctx, req, resp)
		}
		if err != nil {
			f.err = &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: fmt.Errorf("login of user %q: %w", user, err)}
		} else {
			s.log.Info("user authorized the server", "user", fmt.Sprintf("%q", user))
		}
		close(f.done)
	})
	select {
	case u := <-f.urlc:
		return u, nil
	case <-f.done:
		return "", f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// challenge is what the flow starts from: the server's answer to a request without a
// token when it is a 401 (its WWW-Authenticate names the resource metadata and scopes),
// else a stand-in 401 without a challenge (a server whose listing is public).
func (s *Server) challenge(ctx context.Context) (*http.Request, *http.Response, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcpbridge-login"}}`
	pctx, cancel := context.WithTimeout(ctx, s.opts.connectTimeout(s.cfg))
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, s.cfg.URL, strings.NewReader(body))
	if err != nil {
		return nil, nil, errors.New("the server URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	hc := s.opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		// Authorize reads the challenge header only; the body is not needed past here.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		resp.Body = http.NoBody
		return req.WithContext(ctx), resp, nil
	}
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	return req.WithContext(ctx), &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// fetchLogin is the person's part of a user's flow (oauth.Settings.LoginFetch): it
// publishes the authorization URL under its state and waits for CompleteLogin. Outside a
// flow StartLogin began (a 401 during a request), the user must log in.
func (s *Server) fetchLogin(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	f, _ := ctx.Value(loginCtxKey{}).(*loginFlow)
	if f == nil {
		return nil, fmt.Errorf("%w: the server refused the user's grant", ErrNeedsLogin)
	}
	u, err := url.Parse(args.URL)
	state := ""
	if err == nil {
		state = u.Query().Get("state")
	}
	if state == "" {
		return nil, errors.New("the authorization URL has no state")
	}
	s.users.mu.Lock()
	if s.users.flows == nil {
		s.users.flows = map[string]*loginFlow{}
	}
	s.users.flows[state] = f
	s.users.mu.Unlock()
	defer func() {
		s.users.mu.Lock()
		delete(s.users.flows, state)
		s.users.mu.Unlock()
	}()
	if relay, ok := s.opts.TokenStore.(LoginRelay); ok {
		// Announced before the URL is handed out, so that no callback can come first.
		ttl := s.opts.Users.loginTimeout()
		if d, ok := ctx.Deadline(); ok {
			ttl = time.Until(d)
		}
		release, err := relay.HoldLogin(ctx, loginID(state), ttl, s.CompleteLogin)
		if err != nil {
			return nil, fmt.Errorf("announcing the login to the other replicas: %w", err)
		}
		defer release()
	}
	select {
	case f.urlc <- args.URL:
	default:
	}
	select {
	case r := <-f.result:
		return r, nil
	case err := <-f.cancel:
		return nil, err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, errors.New("no callback within the login timeout")
		}
		return nil, ctx.Err()
	}
}

// Bounds on a callback's query values.
const (
	maxCallbackValue = 4096
	maxErrorText     = 200
)

// CompleteLogin finishes the login StartLogin began for user, with the query of the
// redirect to the web app's callback (code, state, iss; or error). It returns once the
// user's grant is stored, or why not; an error wrapping ErrLoginUnknown when no login of
// this server waits for the state. A callback for a user other than the one the login was
// started for fails and ends that login.
func (s *Server) CompleteLogin(ctx context.Context, user string, query url.Values) error {
	state := query.Get("state")
	s.users.mu.Lock()
	f := s.users.flows[state]
	if f != nil {
		delete(s.users.flows, state) // one callback per flow
	}
	s.users.mu.Unlock()
	if f == nil || state == "" {
		return fmt.Errorf("login of server %q: %w", s.cfg.ID, ErrLoginUnknown)
	}
	code, iss := query.Get("code"), query.Get("iss")
	switch {
	case f.user != user:
		f.cancel <- errors.New("the callback came for another user")
		return &ServerError{Server: s.cfg.ID, Phase: PhaseConfig, Err: fmt.Errorf("login: the callback is for user %q, the login was started for another user; login ended", user)}
	case query.Get("error") != "":
		e := fmt.Errorf("the authorization server refused: %s", clip(query.Get("error")+" "+query.Get("error_description"), maxErrorText))
		f.cancel <- e
	case code == "" || len(code) > maxCallbackValue || len(iss) > maxCallbackValue:
		f.cancel <- errors.New("the callback has no valid code")
	default:
		f.result <- &auth.AuthorizationResult{Code: code, State: state, Iss: iss}
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clip bounds and quotes untrusted text for an error.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return fmt.Sprintf("%q", strings.TrimSpace(s))
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
	state := query.Get("state")
	var relay LoginRelay
	for _, s := range set.Servers() {
		s.users.mu.Lock()
		_, ok := s.users.flows[state]
		s.users.mu.Unlock()
		if ok {
			return s.CompleteLogin(ctx, user, query)
		}
		if r, ok := s.opts.TokenStore.(LoginRelay); ok && s.perUser() {
			relay = r
		}
	}
	if relay == nil || state == "" || len(state) > maxCallbackValue {
		return fmt.Errorf("login: %w", ErrLoginUnknown)
	}
	if err := ValidateUserID(user); err != nil {
		return err
	}
	if err := relay.RelayLogin(ctx, loginID(state), user, relayedQuery(query)); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	return nil
}
