package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// defaultLoginWait is how long login waits for the browser to come back.
const defaultLoginWait = 5 * time.Minute

// runLogin logs in to the named OAuth servers of FILE (all of them without IDs), one after
// the other: each gets its own single-use loopback redirect listener (RFC 8252), the
// browser is opened on the authorization URL (always printed on stderr too), and the
// server is dialled with an Authorizer that waits for the redirect. A login always asks the
// person again, even when a token is stored; the stored one is replaced only on success.
func runLogin(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	log := newLogger(env.stderr, levelFor(fl, slog.LevelWarn))
	servers, _, err := readConfig(env, args[0], log)
	if err != nil {
		return err
	}
	targets, err := authTargets(servers, args[0], args[1:], true)
	if err != nil {
		return err
	}
	store, err := bridge.DefaultTokenStore()
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	wait := fl.wait
	if wait <= 0 {
		wait = defaultLoginWait
	}
	failed := 0
	for _, cfg := range targets {
		if cfg.Auth.Type != bridge.AuthOAuth {
			fmt.Fprintf(env.stdout, "%s: uses %s; no login needed\n", escapeLine(cfg.ID), cfg.Auth.Type)
			continue
		}
		line, err := loginOne(ctx, env, fl, log, cfg, freshStore{store}, wait)
		if err != nil {
			failed++
			fmt.Fprintf(env.stdout, "%s: login failed: %s\n", escapeLine(cfg.ID), escapeLine(redact.OneLine(err.Error())))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		fmt.Fprintf(env.stdout, "%s: %s\n", escapeLine(cfg.ID), line)
	}
	if ctx.Err() != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	}
	if failed > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d logins failed", failed, len(targets))}
	}
	fmt.Fprintf(env.stderr, "tokens are kept in %s\n", store.Path)
	return nil
}

// loginOne logs in to one server and returns what to print about its new grant.
func loginOne(ctx context.Context, env *cliEnv, fl *cliFlags, log *slog.Logger, cfg bridge.ServerConfig, store bridge.TokenStore, wait time.Duration) (string, error) {
	lb, err := listenLoopback()
	if err != nil {
		return "", err
	}
	defer lb.close()
	var asked atomic.Bool
	authz := &bridge.Authorizer{
		RedirectURL: lb.redirectURL,
		Fetch: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			asked.Store(true)
			if err := lb.expect(a.URL); err != nil {
				return nil, err
			}
			fmt.Fprintf(env.stderr, "To log in to %s, open this URL in a browser:\n\n  %s\n\n", escapeLine(cfg.ID), escapeLine(a.URL))
			if !fl.noBrowser {
				if err := env.openURL(a.URL); err != nil {
					fmt.Fprintf(env.stderr, "(%v; open it yourself)\n", err)
				}
			}
			fmt.Fprintf(env.stderr, "waiting for the browser (up to %s)…\n", wait)
			return lb.wait(ctx, wait)
		},
	}
	base := cfg.ConnectTimeout
	if base <= 0 {
		base = fl.timeout
	}
	if base <= 0 {
		base = bridge.DefaultConnectTimeout
	}
	cfg.ConnectTimeout = base + wait
	srv, err := bridge.Dial(ctx, cfg, &bridge.Options{Logger: log, TokenStore: store, Authorizer: authz})
	if err != nil {
		return "", loginError(err)
	}
	defer srv.Close()
	if !asked.Load() {
		return "the server let us in without a login", nil
	}
	return "logged in; " + authLine(srv.Status().Auth, time.Now()), nil
}

// loginError is err without the "mcp server ...:" framing (the line names the server).
func loginError(err error) error {
	var se *bridge.ServerError
	if errors.As(err, &se) && se.Err != nil {
		return fmt.Errorf("%s: %w", se.Phase, se.Err)
	}
	return err
}

// runLogout forgets the stored tokens of the named servers.
func runLogout(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	log := newLogger(env.stderr, levelFor(fl, slog.LevelWarn))
	servers, _, err := readConfig(env, args[0], log)
	if err != nil {
		return err
	}
	targets, err := authTargets(servers, args[0], args[1:], false)
	if err != nil {
		return err
	}
	for _, cfg := range targets {
		if err := bridge.Logout(ctx, cfg, nil); err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("%s: %w", cfg.ID, err)}
		}
		fmt.Fprintf(env.stdout, "%s: logged out (stored tokens forgotten)\n", escapeLine(cfg.ID))
	}
	return nil
}

// authTargets picks the servers named in ids (every OAuth server of the file when ids is
// empty and all is set); each must have an auth setting.
func authTargets(cfgs []bridge.ServerConfig, file string, ids []string, all bool) ([]bridge.ServerConfig, error) {
	var out []bridge.ServerConfig
	if len(ids) == 0 && all {
		for _, c := range cfgs {
			if c.Auth != nil && c.Auth.Type == bridge.AuthOAuth {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, usageErr("%s: no server has auth: {type: oauth}", file)
		}
		return out, nil
	}
	for _, id := range ids {
		i := slices.IndexFunc(cfgs, func(c bridge.ServerConfig) bool { return c.ID == id })
		switch {
		case i < 0:
			return nil, usageErr("%s: no enabled server %q", file, id)
		case cfgs[i].Auth == nil:
			return nil, usageErr("%s: server %q has no auth setting (auth: {type: oauth})", file, id)
		}
		out = append(out, cfgs[i])
	}
	return out, nil
}

// freshStore reads no token, so the bridge asks the person even when one is stored; a new
// token replaces the old one only once the login succeeded.
type freshStore struct{ bridge.TokenStore }

func (freshStore) LoadToken(context.Context, string) (*bridge.StoredToken, error) { return nil, nil }

// maxCallbackText bounds what of the authorization server's error is shown.
const maxCallbackText = 200

// loopback is the RFC 8252 redirect listener: 127.0.0.1, a random port, one use. It answers
// only the redirect whose state is the one in the authorization URL.
type loopback struct {
	ln          net.Listener
	srv         *http.Server
	redirectURL string
	got         chan callbackResult // buffered: the first valid redirect

	mu    sync.Mutex // guards the fields below
	state string     // of the authorization URL being waited for; "" before expect
	used  bool
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

func listenLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("login: redirect listener: %w", err)
	}
	lb := &loopback{ln: ln, got: make(chan callbackResult, 1), redirectURL: "http://" + ln.Addr().String() + "/callback"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", lb.callback)
	lb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() { _ = lb.srv.Serve(ln) }()
	return lb, nil
}

// expect takes the state from the authorization URL the browser is sent to; the listener
// then accepts one redirect with that state (a scope step-up asks again with a new one).
func (lb *loopback) expect(authURL string) error {
	u, err := url.Parse(authURL)
	if err != nil || u.Query().Get("state") == "" {
		return errors.New("login: the authorization URL has no state")
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.state, lb.used = u.Query().Get("state"), false
	select {
	case <-lb.got: // a result nobody waited for
	default:
	}
	return nil
}

// wait returns the redirect's code, state and iss, or fails after d.
func (lb *loopback) wait(ctx context.Context, d time.Duration) (*auth.AuthorizationResult, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-lb.got:
		return r.res, r.err
	case <-t.C:
		return nil, fmt.Errorf("login: no redirect from the browser within %s", d)
	case <-ctx.Done():
		return nil, fmt.Errorf("login: %w", context.Cause(ctx))
	}
}

func (lb *loopback) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if lb.srv.Shutdown(ctx) != nil {
		_ = lb.srv.Close()
	}
}

// callback is the redirect: it answers a plain page and hands the result to wait once.
func (lb *loopback) callback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	q := r.URL.Query()
	lb.mu.Lock()
	want, used := lb.state, lb.used
	ok := !used && want != "" && q.Get("state") == want
	if ok {
		lb.used = true
	}
	lb.mu.Unlock()
	switch {
	case used:
		w.WriteHeader(http.StatusGone)
		fmt.Fprintln(w, "mcpbridge: this login is already finished. You can close this tab.")
		return
	case !ok:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "mcpbridge: this is not the login mcpbridge is waiting for (state does not match).")
		return
	}
	var res callbackResult
	switch {
	case q.Get("error") != "":
		msg := redact.Line(redact.ASCII(q.Get("error"), ' '), maxCallbackText)
		if d := redact.Line(redact.ASCII(q.Get("error_description"), ' '), maxCallbackText); d != "" {
			msg += ": " + d
		}
		res.err = fmt.Errorf("login: the authorization server answered %s", msg)
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "mcpbridge: login failed (%s). You can close this tab.\n", msg)
	case q.Get("code") == "":
		res.err = errors.New("login: the redirect has no code")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintln(w, "mcpbridge: login failed (no code). You can close this tab.")
	default:
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		fmt.Fprintln(w, "mcpbridge: logged in. You can close this tab.")
	}
	lb.got <- res
}

// levelFor is base, or debug with -v.
func levelFor(fl *cliFlags, base slog.Level) slog.Level {
	if fl.verbose {
		return slog.LevelDebug
	}
	return base
}

// authLine is what probe and login say about a grant, without any secret:
// "oauth: token valid until 14:02, refresh token kept (authorization_code grant)",
// "workload_identity: DPoP-bound token valid until 14:02 (jwt-bearer grant)".
func authLine(as *bridge.AuthStatus, now time.Time) string {
	if as == nil {
		return "no token"
	}
	s := as.Type + ": "
	if as.Binding == "dpop" {
		s += "DPoP-bound "
	}
	switch exp := as.Expiry.Local(); {
	case as.Expiry.IsZero():
		s += "token without expiry"
	case as.Expiry.Before(now):
		s += "token expired at " + clock(exp, now)
	default:
		s += "token valid until " + clock(exp, now)
	}
	if as.RefreshToken {
		s += ", refresh token kept"
	} else if as.Type == bridge.AuthOAuth {
		s += ", no refresh token"
	}
	if as.GrantType != "" {
		s += " (" + as.GrantType + " grant)"
	}
	return s
}

// clock is t as 14:02, with the date when it is not today.
func clock(t, now time.Time) string {
	now = now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}
