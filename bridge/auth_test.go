package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
	"github.com/ttalk/mcpbridge/internal/slack"
)

// newAuthServer is a local authorization server in front of the "basic" fixture.
func newAuthServer(t *testing.T) *oauthtest.Server {
	as := oauthtest.New(newFixture("basic", nil))
	t.Cleanup(as.Close)
	return as
}

// browserAuthorizer plays the person at the browser: it follows the authorization URL to the
// redirect and hands back the code and state, without a listener.
func browserAuthorizer() *bridge.Authorizer {
	return &bridge.Authorizer{
		RedirectURL: "http://127.0.0.1:9/callback",
		Fetch: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			to, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || to.Query().Get("code") == "" {
				return nil, fmt.Errorf("authorization answered %d without a code", resp.StatusCode)
			}
			return &auth.AuthorizationResult{Code: to.Query().Get("code"), State: to.Query().Get("state"), Iss: to.Query().Get("iss")}, nil
		},
	}
}

func oauthOpts(store bridge.TokenStore, authz *bridge.Authorizer) *bridge.Options {
	o := quiet()
	o.TokenStore, o.Authorizer = store, authz
	o.ConnectTimeout = 20 * time.Second
	return o
}

// debugLog is a debug-level text log in memory, safe for concurrent use.
type debugLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *debugLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{&l.buf, &l.mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *debugLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// checkNoTokens fails when a token or code the authorization server issued appears in texts.
func checkNoTokens(t *testing.T, as *oauthtest.Server, texts ...string) {
	t.Helper()
	issued := as.Issued()
	if len(issued) == 0 {
		t.Fatal("the authorization server issued nothing")
	}
	for _, tok := range issued {
		for _, s := range texts {
			if strings.Contains(s, tok) {
				t.Errorf("issued token or code %q leaked:\n%s", tok, s)
			}
		}
	}
}

// Log in once (the authorization code flow with PKCE, dynamic registration); the token is
// kept with 0600 and a second Connect, headless, reuses it; an expired access token is
// refreshed silently; a revoked refresh token skips the server with "needs login".
func TestOAuthTokenLifecycle(t *testing.T) {
	as := newAuthServer(t)
	store := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "mcpbridge", "tokens.json")}
	cfg := bridge.ServerConfig{ID: "tracker", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}, Source: "servers.yaml:3"}
	call := func(t *testing.T, set *bridge.Set) {
		t.Helper()
		out, err := byName(t, set.Tools(), "echo").Handler(ctxT(t, 10*time.Second), []byte(`{"z":"hi"}`))
		if err != nil || !strings.Contains(out, "hi") {
			t.Fatalf("echo = %q, %v", out, err)
		}
	}

	var log debugLog
	var errs []string
	logged := func(store bridge.TokenStore, authz *bridge.Authorizer) *bridge.Options {
		o := oauthOpts(store, authz)
		o.Logger = log.logger()
		o.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
			if st.Err != nil {
				log.mu.Lock()
				errs = append(errs, st.Err.Error())
				log.mu.Unlock()
			}
		}
		return o
	}
	t.Cleanup(func() {
		log.mu.Lock()
		all := strings.Join(errs, "\n")
		log.mu.Unlock()
		checkNoTokens(t, as, log.String(), all)
	})

	set, err := connectSet(t, []bridge.ServerConfig{cfg}, logged(store, browserAuthorizer()))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("login: %v %v", err, set.Failed())
	}
	call(t, set)
	if as.Count("authorization_code") != 1 {
		t.Fatalf("%d code exchanges, want 1", as.Count("authorization_code"))
	}
	st := set.Servers()[0].Status().Auth
	if st == nil || st.Type != bridge.AuthOAuth || !st.RefreshToken || st.Expiry.IsZero() {
		t.Errorf("status auth = %+v", st)
	}
	if fi, err := os.Stat(store.Path); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	_ = set.Close()

	t.Run("reused without login", func(t *testing.T) {
		set, err := connectSet(t, []bridge.ServerConfig{cfg}, logged(store, nil))
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("%v %v", err, set.Failed())
		}
		call(t, set)
		if n := as.Count("authorization_code"); n != 1 {
			t.Errorf("%d code exchanges, want still 1", n)
		}
	})
	t.Run("expired access token refreshed", func(t *testing.T) {
		as.ExpireAll()
		before := as.Count("refresh_token")
		set, err := connectSet(t, []bridge.ServerConfig{cfg}, logged(store, nil))
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("%v %v", err, set.Failed())
		}
		call(t, set)
		if as.Count("refresh_token") <= before {
			t.Error("no refresh")
		}
	})
	t.Run("revoked refresh token needs login", func(t *testing.T) {
		as.ExpireAll()
		as.RevokeRefresh()
		start := time.Now()
		set, err := connectSet(t, []bridge.ServerConfig{cfg}, logged(store, nil))
		if err != nil {
			t.Fatal(err)
		}
		slack.Within(t, "Connect with a revoked refresh token", time.Since(start), 0)
		f := set.Failed()
		if len(f) != 1 || !errors.Is(f[0], bridge.ErrNeedsLogin) || !strings.Contains(f[0].Error(), "needs login: ") ||
			strings.Contains(f[0].Error(), "mcpbridge login") { // the CLI adds what to run, not the library
			t.Fatalf("failed = %v, want needs login", f)
		}
	})
	t.Run("required server needing login fails Connect", func(t *testing.T) {
		req := cfg
		req.Required = true
		_, err := bridge.Connect(ctxT(t, 20*time.Second), []bridge.ServerConfig{req}, oauthOpts(store, nil))
		if !errors.Is(err, bridge.ErrNeedsLogin) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("logout", func(t *testing.T) {
		if err := bridge.Logout(context.Background(), cfg, store); err != nil {
			t.Fatal(err)
		}
		tok, err := store.LoadToken(context.Background(), "x")
		if err != nil || tok != nil {
			t.Errorf("LoadToken after logout = %v, %v", tok, err)
		}
		b, _ := os.ReadFile(store.Path)
		if strings.Contains(string(b), "access_token") {
			t.Errorf("token file still holds a token:\n%s", b)
		}
	})
}

// A fresh store and no Authorizer: Connect never waits for a person.
func TestOAuthWithoutTokenNeedsLogin(t *testing.T) {
	as := newAuthServer(t)
	store := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "t", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, oauthOpts(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrNeedsLogin) || !strings.Contains(f[0].Error(), "no OAuth token is stored") {
		t.Fatalf("failed = %v", f)
	}
}

// The client credentials grant with each client authentication method; the resource
// parameter names the server; the secrets never reach the log.
func TestClientCredentials(t *testing.T) {
	keyPEM, pub, err := oauthtest.ECKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		auth bridge.AuthConfig
	}{
		{"client_secret_basic", bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "cc-SECRET-1"}},
		{"client_secret_post", bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "cc-SECRET-1", TokenEndpointAuth: "client_secret_post"}},
		{"private_key_jwt", bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "jwt-svc", PrivateKeyFile: keyFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t)
			as.AddClient("svc", "cc-SECRET-1")
			as.AddJWTClient("jwt-svc", pub)
			var buf bytes.Buffer
			var mu sync.Mutex
			opts := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}, nil)
			opts.Logger = slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
			a := tt.auth
			cfg := bridge.ServerConfig{ID: "billing", URL: as.URL(), Auth: &a}
			set, err := connectSet(t, []bridge.ServerConfig{cfg}, opts)
			if err != nil || len(set.Failed()) > 0 {
				t.Fatalf("%v %v", err, set.Failed())
			}
			if _, err := byName(t, set.Tools(), "echo").Handler(ctxT(t, 10*time.Second), []byte(`{"z":"x"}`)); err != nil {
				t.Fatal(err)
			}
			if as.Count("client_credentials") != 1 {
				t.Errorf("%d client credentials grants", as.Count("client_credentials"))
			}
			if res := as.Resources(); len(res) == 0 || res[0] != as.URL() {
				t.Errorf("resource parameters = %v, want %s", res, as.URL())
			}
			mu.Lock()
			defer mu.Unlock()
			for _, secret := range []string{"cc-SECRET-1", "PRIVATE KEY"} {
				if strings.Contains(buf.String(), secret) || strings.Contains(fmt.Sprint(cfg), secret) || strings.Contains(fmt.Sprintf("%#v", cfg), secret) {
					t.Errorf("%q reached the log or the config's string", secret)
				}
			}
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		as := newAuthServer(t)
		set, err := connectSet(t, []bridge.ServerConfig{{ID: "b", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "wrong"}}},
			oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}, nil))
		if err != nil {
			t.Fatal(err)
		}
		if f := set.Failed(); len(f) != 1 || !strings.Contains(f[0].Error(), "invalid_client") || strings.Contains(f[0].Error(), "wrong") {
			t.Fatalf("failed = %v", f)
		}
	})
}
