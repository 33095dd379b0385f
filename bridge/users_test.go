package bridge_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// usersServer is a local OAuth-protected Streamable HTTP server whose catalogue is public
// and whose tool "whoami" counts in wrong every request whose token is not its caller's.
func usersServer(t *testing.T) (*oauthtest.Server, *atomic.Int64) {
	return usersServerOf(t, stateful)
}

// The two kinds of Streamable HTTP server a user's calls reach: one that keeps a session
// (go-sdk's default handler, protocol 2025-11-25 with an Mcp-Session-Id) and one that keeps
// none (protocol 2026-07-28, every request its own POST).
const (
	stateful  = "stateful"
	stateless = "stateless"
	// statelessGrant is a stateless server that answers nothing without a user's grant, not
	// even server/discover: it has no shared session, only the users' connection.
	statelessGrant = "stateless, discover needs a grant"
)

// usersServerOf is usersServer of the given kind (stateful or stateless).
func usersServerOf(t *testing.T, kind string) (*oauthtest.Server, *atomic.Int64) {
	t.Helper()
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: kind != stateful, Logger: discard()})
	if kind != statelessGrant {
		as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	}
	t.Cleanup(as.Close)
	return as, &wrong
}

func usersSet(t *testing.T, as *oauthtest.Server, store bridge.TokenStore, log *debugLog) *bridge.Set {
	t.Helper()
	o := oauthOpts(store, nil)
	if log != nil {
		o.Logger = log.logger()
	}
	o.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, o)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	return set
}

// whoami calls the tool for user, as user (arg names the user the token must belong to).
func whoami(ctx context.Context, set *bridge.Set, user, arg string) (string, error) {
	args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(arg)})
	tools := set.Tools()
	if len(tools) == 0 { // a server that lists only for a user's grant
		var err error
		if tools, err = set.ToolsFor(bridge.WithUser(ctx, user)); len(tools) == 0 {
			return "", err
		}
	}
	for _, tl := range tools {
		if tl.Name == "whoami" {
			out, err := tl.Handler(bridge.WithUser(ctx, user), args)
			if err != nil {
				return out, err
			}
			b, err := hex.DecodeString(out)
			return string(b), err
		}
	}
	return "", errors.New("no whoami tool")
}

// login walks user through the web login: needs-login error, authorization URL, the
// authorization server's consent, the callback.
func login(t *testing.T, ctx context.Context, set *bridge.Set, user string) {
	t.Helper()
	_, err := whoami(ctx, set, user, user)
	var nle *bridge.NeedsLoginError
	if !errors.As(err, &nle) || !errors.Is(err, bridge.ErrNeedsLogin) || nle.User != user || nle.Server != "svc" {
		t.Fatalf("user %q before login: %v, want a *NeedsLoginError", user, err)
	}
	u, err := nle.AuthorizationURL(ctx)
	if err != nil {
		t.Fatalf("user %q: authorization URL: %v", user, err)
	}
	q, err := oauthtest.Consent(ctx, u, user)
	if err != nil {
		t.Fatalf("user %q: consent: %v", user, err)
	}
	if err := set.CompleteLogin(ctx, user, q); err != nil {
		t.Fatalf("user %q: complete login: %v", user, err)
	}
}

func TestUsersHaveTheirOwnGrants(t *testing.T) {
	for _, kind := range []string{stateful, stateless, statelessGrant} {
		t.Run(kind, func(t *testing.T) { testUsersHaveTheirOwnGrants(t, kind) })
	}
}

func testUsersHaveTheirOwnGrants(t *testing.T, kind string) {
	as, wrong := usersServerOf(t, kind)
	var log debugLog
	store := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	set := usersSet(t, as, store, &log)
	ctx := ctxT(t, 60*time.Second)

	// Odd bytes in IDs: a NUL, invalid UTF-8, a path, a prefix of another ID, a long one.
	users := []string{"alice", "bob", "a\x00b", "a", "ab", "\xff\xfe", "../../etc", strings.Repeat("z", bridge.MaxUserIDBytes)}
	for _, u := range users {
		login(t, ctx, set, u)
	}
	if n := as.Count("authorization_code"); n != len(users) {
		t.Fatalf("%d code exchanges, want %d", n, len(users))
	}

	// Many users concurrently, each call checked by the server against its caller.
	var wg sync.WaitGroup
	errc := make(chan error, len(users)*20)
	for _, u := range users {
		for range 20 {
			wg.Go(func() {
				out, err := whoami(ctx, set, u, u)
				if err != nil || out != u {
					errc <- fmt.Errorf("user %q: %q, %v", u, out, err)
				}
			})
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d requests carried another user's token", n)
	}
	// The check can fail: bob's call claiming to be alice's is caught by the server.
	if _, err := whoami(ctx, set, "bob", "alice"); err == nil {
		t.Fatal("bob's token passed as alice's")
	}
	if n := wrong.Load(); n != 1 {
		t.Fatalf("the server counted %d wrong requests, want 1", n)
	}
	want := len(users) // a session per user on the stateful server, none on the stateless ones
	if kind != stateful {
		want = 0
	}
	if n := set.Servers()[0].UserSessions(); n != want {
		t.Errorf("%d user sessions, want %d", n, want)
	}
	checkNoTokens(t, as, log.String())
}

func TestUserIDsAreChecked(t *testing.T) {
	as, _ := usersServer(t)
	set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	ctx := ctxT(t, 30*time.Second)
	for _, u := range []string{"", strings.Repeat("x", bridge.MaxUserIDBytes+1)} {
		if _, err := whoami(ctx, set, u, u); !errors.Is(err, bridge.ErrInvalidUser) {
			t.Errorf("user of %d bytes: %v, want ErrInvalidUser", len(u), err)
		}
	}
	// No user at all on a per-user server: refused, never the host's grant.
	args := json.RawMessage(`{"user":"x"}`)
	if _, err := byName(t, set.Tools(), "whoami").Handler(ctx, args); err == nil || !strings.Contains(err.Error(), "no user on the call") {
		t.Errorf("call without a user: %v", err)
	}
}

func TestLoginCallbackChecks(t *testing.T) {
	as, _ := usersServer(t)
	set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	ctx := ctxT(t, 30*time.Second)

	if err := set.CompleteLogin(ctx, "alice", map[string][]string{"state": {"forged"}, "code": {"x"}}); !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("unknown state: %v", err)
	}
	// A callback for another user than the one who started the login ends the login.
	u, err := set.StartLogin(ctx, "alice", "svc")
	if err != nil {
		t.Fatal(err)
	}
	q, err := oauthtest.Consent(ctx, u, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.CompleteLogin(ctx, "mallory", q); err == nil || errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("callback for another user: %v", err)
	}
	if err := set.CompleteLogin(ctx, "alice", q); !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("the login should have ended: %v", err)
	}
	if _, err := whoami(ctx, set, "alice", "alice"); !errors.Is(err, bridge.ErrNeedsLogin) {
		t.Errorf("alice after a refused callback: %v", err)
	}
	// The person refuses.
	as.Deny(true)
	u, err = set.StartLogin(ctx, "alice", "svc")
	if err != nil {
		t.Fatal(err)
	}
	q, err = oauthtest.Consent(ctx, u, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.CompleteLogin(ctx, "alice", q); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("refused login: %v", err)
	}
}

func TestRefreshRevokedForOneUser(t *testing.T) {
	for _, kind := range []string{stateful, stateless, statelessGrant} {
		t.Run(kind, func(t *testing.T) { testRefreshRevokedForOneUser(t, kind) })
	}
}

func testRefreshRevokedForOneUser(t *testing.T, kind string) {
	as, wrong := usersServerOf(t, kind)
	set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	ctx := ctxT(t, 60*time.Second)
	login(t, ctx, set, "alice")
	login(t, ctx, set, "bob")

	as.ExpireOf("alice")
	as.ExpireOf("bob")
	as.RevokeRefreshOf("alice")
	_, err := whoami(ctx, set, "alice", "alice")
	var nle *bridge.NeedsLoginError
	if !errors.As(err, &nle) || nle.User != "alice" || nle.Reason != bridge.ReasonGrantRefused {
		t.Fatalf("alice with a revoked refresh token: %v, want a *NeedsLoginError (ReasonGrantRefused)", err)
	}
	if out, err := whoami(ctx, set, "bob", "bob"); err != nil || out != "bob" {
		t.Fatalf("bob: %q, %v", out, err)
	}
	// Alice logs in again; her next call works.
	u, err := nle.AuthorizationURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, err := oauthtest.Consent(ctx, u, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.CompleteLogin(ctx, "alice", q); err != nil {
		t.Fatal(err)
	}
	if out, err := whoami(ctx, set, "alice", "alice"); err != nil || out != "alice" {
		t.Fatalf("alice after logging in again: %q, %v", out, err)
	}
	if wrong.Load() != 0 {
		t.Fatalf("%d cross-user requests", wrong.Load())
	}
}

// downStore is a FileTokenStore that can be made slow (answering nothing until ctx ends)
// or down (failing at once).
type downStore struct {
	bridge.FileTokenStore
	slow, down atomic.Bool
}

func (d *downStore) fail(ctx context.Context) error {
	if d.down.Load() {
		return errors.New("dial tcp 127.0.0.1:6379: connection refused")
	}
	<-ctx.Done()
	return ctx.Err()
}

func (d *downStore) LoadToken(ctx context.Context, key string) (*bridge.StoredToken, error) {
	if d.slow.Load() || d.down.Load() {
		return nil, d.fail(ctx)
	}
	return d.FileTokenStore.LoadToken(ctx, key)
}

func TestTokenStoreDownIsBounded(t *testing.T) {
	as, _ := usersServer(t)
	store := &downStore{FileTokenStore: bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}}
	set := usersSet(t, as, store, nil)

	store.slow.Store(true)
	ctx, cancel := context.WithTimeout(ctxT(t, 30*time.Second), 200*time.Millisecond)
	defer cancel()
	if _, err := whoami(ctx, set, "alice", "alice"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("store slow: %v, want the call's deadline", err)
	}
	store.slow.Store(false)
	store.down.Store(true)
	_, err := whoami(ctxT(t, 30*time.Second), set, "bob", "bob")
	if err == nil || !strings.Contains(err.Error(), "token store") || !strings.Contains(err.Error(), "connection refused") || errors.Is(err, bridge.ErrNeedsLogin) {
		t.Errorf("store down: %v, want the store's failure (not a login)", err)
	}
}

func TestProxyNamesTheUser(t *testing.T) {
	as, wrong := usersServer(t)
	store := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	o := oauthOpts(store, nil)
	o.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", ProxyUser: func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no session")
	}}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, o)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	ctx := ctxT(t, 60*time.Second)
	login(t, ctx, set, "carol")
	h := set.ProxyHandler()
	post := func(user string) *httptest.ResponseRecorder {
		body := `{"serverId":"svc","method":"tools/call","params":{"name":"whoami","arguments":{"user":"` + oauthtest.UserArg("carol") + `"}}}`
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/proxy", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if user != "" {
			r.Header.Set("X-Test-User", user)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := post("carol"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), oauthtest.UserArg("carol")) {
		t.Fatalf("carol's proxy call: %d %s", w.Code, w.Body)
	}
	if w := post(""); w.Code != http.StatusUnauthorized {
		t.Errorf("no user: %d %s", w.Code, w.Body)
	}
	if w := post("dave"); w.Code == http.StatusOK || !strings.Contains(w.Body.String(), "authorize") {
		t.Errorf("dave without a grant: %d %s", w.Code, w.Body)
	}
	if wrong.Load() != 0 {
		t.Fatalf("%d cross-user requests", wrong.Load())
	}
}

// TestUserSessionsAreBounded: the users a server keeps state for are bounded by
// MaxSessions and IdleTimeout, on the stateful server (a session each) and the stateless one
// (an OAuth handler each, no session).
func TestUserSessionsAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		uo   bridge.UserOptions
		want int
	}{
		{"cap", bridge.UserOptions{MaxSessions: 2}, 2},
		{"idle", bridge.UserOptions{IdleTimeout: time.Nanosecond}, 1},
	} {
		for _, kind := range []string{stateful, stateless} {
			t.Run(tc.name+" "+kind, func(t *testing.T) {
				as, wrong := usersServerOf(t, kind)
				o := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
				uo := tc.uo
				uo.RedirectURL = "http://127.0.0.1:1/callback"
				o.Users = &uo
				set, err := connectSet(t, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, o)
				if err != nil || len(set.Failed()) > 0 {
					t.Fatalf("connect: %v %v", err, set.Failed())
				}
				ctx := ctxT(t, 60*time.Second)
				s := set.Servers()[0]
				sessions := tc.want
				if kind == stateless {
					sessions = 0
				}
				check := func(when string) {
					t.Helper()
					if n := s.UserSessions(); n != sessions {
						t.Errorf("%s: %d user sessions, want %d", when, n, sessions)
					}
					if n := s.UserStates(); n != tc.want {
						t.Errorf("%s: state kept for %d users, want %d", when, n, tc.want)
					}
				}
				users := []string{"a", "b", "c", "d"}
				for _, u := range users {
					login(t, ctx, set, u)
					if out, err := whoami(ctx, set, u, u); err != nil || out != u {
						t.Fatalf("%s: %q, %v", u, out, err)
					}
				}
				check("after the logins")
				// Evicted users' next calls rebuild their state from the stored grants.
				for _, u := range users {
					if out, err := whoami(ctx, set, u, u); err != nil || out != u {
						t.Fatalf("%s again: %q, %v", u, out, err)
					}
				}
				check("after calling again")
				if wrong.Load() != 0 {
					t.Fatalf("%d cross-user requests", wrong.Load())
				}
			})
		}
	}
}

// TestUserCallPath fails when a user's call takes another path than the server's kind
// calls for: on the stateless server (2026-07-28) the shared connection with the user's
// token, no session per user (also where even server/discover needs a user's grant: the
// users' connection); on the stateful one (2025-11-25, Mcp-Session-Id) a session per user,
// its calls on the direct path beside it (with the user's token). Refresh after the server dropped a user's access token (a 401)
// works on both paths.
func TestUserCallPath(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		protocol string
		sessions int   // per-user sessions after every user called
		direct   int64 // calls on the direct path
		shared   int64 // of them, by users on the shared connection
		sdk      int64
	}{
		{stateless, "2026-07-28", 0, 6, 6, 0},
		{stateful, "2025-11-25", 3, 6, 0, 0}, // on each user's own session
		{statelessGrant, "", 0, 6, 6, 0},     // no shared session: the users' connection, opened with u1's grant
	} {
		t.Run(tc.kind, func(t *testing.T) {
			as, wrong := usersServerOf(t, tc.kind)
			set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
			s := set.Servers()[0]
			if v := s.Status().ProtocolVersion; tc.protocol != "" && v != tc.protocol {
				t.Fatalf("protocol %q, want %q", v, tc.protocol)
			}
			ctx := ctxT(t, 60*time.Second)
			users := []string{"u1", "u2", "u3"}
			for _, u := range users {
				login(t, ctx, set, u)
			}
			as.ExpireOf("u2") // u2's next call is refused (401) and refreshes
			for _, u := range users {
				for range 2 {
					if out, err := whoami(ctx, set, u, u); err != nil || out != u {
						t.Fatalf("%s: %q, %v", u, out, err)
					}
				}
			}
			if n := s.UserSessions(); n != tc.sessions {
				t.Errorf("%d user sessions, want %d", n, tc.sessions)
			}
			direct, sdk := s.CallPaths()
			if got, want := [3]int64{direct, s.UserDirectCalls(), sdk}, [3]int64{tc.direct, tc.shared, tc.sdk}; got != want {
				t.Errorf("calls (direct, users' direct on the shared connection, go-sdk) = %v, want %v", got, want)
			}
			if n := as.Count("refresh_token"); n != 1 {
				t.Errorf("%d refreshes, want 1 (u2's)", n)
			}
			if wrong.Load() != 0 {
				t.Fatalf("%d cross-user requests", wrong.Load())
			}
		})
	}
}

// TestUserInputOnStatelessServer: a user's call on a stateless server that asks for input
// (2026-07-28 multi-round-trip) goes on with that user's token in every round: the first
// direct, on the shared connection; the retry with the answer on the user's own session,
// opened for it.
func TestUserInputOnStatelessServer(t *testing.T) {
	var wrong, rounds atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "confirm", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			rounds.Add(1)
			var args struct{ User string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if ti := req.Extra.TokenInfo; ti == nil || oauthtest.UserArg(ti.UserID) != args.User {
				wrong.Add(1)
				return nil, errors.New("this request's token is not the caller's")
			}
			if r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.User + " " + r.Action}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "sure?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
				RequestState:  "s",
			}, nil
		})
	as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: true, Logger: discard()})
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	t.Cleanup(as.Close)
	o := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	o.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}
	o.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, o)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	ctx := ctxT(t, 60*time.Second)
	users := []string{"alice", "bob"}
	for _, u := range users {
		loginTo(t, ctx, set, u)
	}
	h := byName(t, set.Tools(), "confirm").Handler
	var wg sync.WaitGroup
	for _, u := range users {
		for range 3 {
			wg.Go(func() {
				out, err := h(bridge.WithUser(ctx, u), json.RawMessage(`{"user":"`+oauthtest.UserArg(u)+`"}`))
				if want := oauthtest.UserArg(u) + " accept"; err != nil || out != want {
					t.Errorf("%s: %q, %v; want %q", u, out, err, want)
				}
			})
		}
	}
	wg.Wait()
	s := set.Servers()[0]
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d requests carried another user's token", n)
	}
	if n := rounds.Load(); n != 12 {
		t.Errorf("%d rounds, want 12 (two per call)", n)
	}
	if n := s.UserDirectCalls(); n != 6 {
		t.Errorf("%d first rounds direct with the user's token, want 6", n)
	}
	if n := s.UserSessions(); n != len(users) {
		t.Errorf("%d user sessions, want %d (opened for the retries)", n, len(users))
	}
}
