package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// The web login engine (package doc, "Web logins"): Logins holds one server's flows waiting
// for their callback; Start begins one, Fetch is the person's part of its handler's flow,
// Complete hands it the callback, and CompleteAny finds the flow among several servers or
// relays the callback to the replica that holds it.

// ErrLoginUnknown is wrapped by CompleteLogin's error for a state that no login is waiting
// for: never started here, already completed, or expired.
var ErrLoginUnknown = errors.New("no login is waiting for this state (unknown, completed or expired)")

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

// Bounds on a callback's query values.
const (
	maxCallbackValue = 4096 // a code, state or iss longer than this is refused
	maxErrorText     = 200  // of the authorization server's error and its description, quoted
)

// LoginSettings are what a server's Logins needs of the server and its host.
type LoginSettings struct {
	Server string // the server's ID, for errors
	URL    string // the server's URL: the flow starts from its answer to a request without a token
	// HTTPClient sends that request; nil: http.DefaultClient. ChallengeTimeout bounds it.
	HTTPClient       *http.Client
	ChallengeTimeout time.Duration
	// Timeout bounds a flow's wait for its callback (UserOptions.LoginTimeout); Max bounds
	// the flows waiting at once (UserOptions.MaxLoginFlows).
	Timeout time.Duration
	Max     int
	// Relay, when set, is announced each flow's login so that a callback reaching another
	// replica is relayed here (to Complete, the server's CompleteLogin).
	Relay    LoginRelay
	Complete func(ctx context.Context, user string, query url.Values) error
	// Life ends every flow when the server closes; Go runs a flow on a goroutine the server
	// waits for. Fail labels an error of a login (a *bridge.ServerError of PhaseLogin).
	Life context.Context
	Go   func(func())
	Fail func(error) error
	Log  *slog.Logger
}

// Logins is one server's web logins waiting for their callback. Safe for concurrent use.
type Logins struct {
	set LoginSettings

	mu    sync.Mutex            // guards flows; a leaf: nothing is called while it is held
	flows map[string]*loginFlow // by the state of the flow's authorization URL
}

// loginFlow is one user's login on one server, waiting for its callback.
type loginFlow struct {
	user   string
	urlc   chan string                       // the authorization URL, once known
	result chan *sdkauth.AuthorizationResult // the callback's code and state
	cancel chan error                        // the callback's refusal
	done   chan struct{}                     // closed when the flow ended
	err    error                             // its outcome; valid once done is closed
}

type loginCtxKey struct{}

// NewLogins returns the login engine of one server.
func NewLogins(st LoginSettings) *Logins { return &Logins{set: st} }

// Holds reports whether a flow waits for state.
func (l *Logins) Holds(state string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.flows[state]
	return ok
}

// Relays reports whether callbacks this process does not hold are relayed (LoginRelay).
func (l *Logins) Relays() bool { return l.set.Relay != nil }

// Start begins user's login and returns the URL to send the user's browser to, once the
// flow knows it. handler gives the user's OAuth handler (or why there is none); it is asked
// only when another flow may start. ctx bounds the wait for the URL (discovery and client
// registration), not the flow.
func (l *Logins) Start(ctx context.Context, user string, handler func() (*Handler, error)) (string, error) {
	l.mu.Lock()
	n := len(l.flows)
	l.mu.Unlock()
	if n >= l.set.Max {
		return "", l.set.Fail(fmt.Errorf("login: %d logins are already waiting for their callback (UserOptions.MaxLoginFlows)", n))
	}
	h, err := handler()
	if err != nil {
		return "", err
	}
	f := &loginFlow{user: user, urlc: make(chan string, 1), result: make(chan *sdkauth.AuthorizationResult, 1), cancel: make(chan error, 1), done: make(chan struct{})}
	fctx, cancel := context.WithTimeout(l.set.Life, l.set.Timeout)
	fctx = context.WithValue(fctx, loginCtxKey{}, f)
	l.set.Go(func() {
		defer cancel()
		req, resp, err := l.challenge(fctx)
		if err == nil {
			err = h.Login(fctx, req, resp)
		}
		if err != nil {
			f.err = l.set.Fail(fmt.Errorf("login of user %q: %w", user, err))
		} else {
			l.set.Log.Info("user authorized the server", "user", fmt.Sprintf("%q", user))
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
func (l *Logins) challenge(ctx context.Context) (*http.Request, *http.Response, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcpbridge-login"}}`
	pctx, cancel := context.WithTimeout(ctx, l.set.ChallengeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, l.set.URL, strings.NewReader(body))
	if err != nil {
		return nil, nil, errors.New("the server URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	hc := l.set.HTTPClient
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

// Fetch is the person's part of a user's flow (Settings.LoginFetch): it publishes the
// authorization URL under its state and waits for Complete. Outside a flow Start began (a
// 401 during a request), the user must log in.
func (l *Logins) Fetch(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
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
	l.mu.Lock()
	if l.flows == nil {
		l.flows = map[string]*loginFlow{}
	}
	l.flows[state] = f
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.flows, state)
		l.mu.Unlock()
	}()
	if l.set.Relay != nil {
		// Announced before the URL is handed out, so that no callback can come first.
		ttl := l.set.Timeout
		if d, ok := ctx.Deadline(); ok {
			ttl = time.Until(d)
		}
		release, err := l.set.Relay.HoldLogin(ctx, loginID(state), ttl, l.set.Complete)
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

// Complete finishes the login Start began for user, with the query of the redirect to the
// web app's callback (code, state, iss; or error). It returns once the user's grant is
// stored, or why not; an error wrapping ErrLoginUnknown when no login of this server waits
// for the state. A callback for a user other than the one the login was started for fails
// and ends that login.
func (l *Logins) Complete(ctx context.Context, user string, query url.Values) error {
	state := query.Get("state")
	l.mu.Lock()
	f := l.flows[state]
	if f != nil {
		delete(l.flows, state) // one callback per flow
	}
	l.mu.Unlock()
	if f == nil || state == "" {
		return fmt.Errorf("login of server %q: %w", l.set.Server, ErrLoginUnknown)
	}
	code, iss := query.Get("code"), query.Get("iss")
	switch {
	case f.user != user:
		f.cancel <- errors.New("the callback came for another user")
		return l.set.Fail(fmt.Errorf("login: the callback is for user %q, the login was started for another user; login ended", user))
	case query.Get("error") != "":
		e := fmt.Errorf("the authorization server refused: %s", strconv.Quote(strings.TrimSpace(redact.ClipMark(query.Get("error")+" "+query.Get("error_description"), maxErrorText, ""))))
		f.cancel <- e
	case code == "" || len(code) > maxCallbackValue || len(iss) > maxCallbackValue:
		f.cancel <- errors.New("the callback has no valid code")
	default:
		f.result <- &sdkauth.AuthorizationResult{Code: code, State: state, Iss: iss}
	}
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CompleteAny is Complete on whichever of ls waits for the query's state. When none does
// and one of them relays (Relays), the callback is relayed to the replica whose login does,
// after checkUser accepts the user, and its outcome returned (an error from there comes
// back as text).
func CompleteAny(ctx context.Context, user string, query url.Values, ls []*Logins, checkUser func(string) error) error {
	state := query.Get("state")
	var relay LoginRelay
	for _, l := range ls {
		if l.Holds(state) {
			return l.Complete(ctx, user, query)
		}
		if l.Relays() {
			relay = l.set.Relay
		}
	}
	if relay == nil || state == "" || len(state) > maxCallbackValue {
		return fmt.Errorf("login: %w", ErrLoginUnknown)
	}
	if err := checkUser(user); err != nil {
		return err
	}
	if err := relay.RelayLogin(ctx, loginID(state), user, relayedQuery(query)); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	return nil
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
