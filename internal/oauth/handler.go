// Package oauth is the bridge's OAuth machinery for Streamable HTTP servers: go-sdk's
// auth.OAuthHandler for one server, with the authorization code flow (through go-sdk's auth
// package, interactive only when the host gives an authorizer), the client credentials grant
// (client_secret_basic, client_secret_post, private_key_jwt), the jwt-bearer grant of
// workload identity federation and enterprise-managed authorization (assert.go), DPoP-bound
// tokens for every grant (dpop.go) and the token file. Tokens come from and go to a Store,
// refreshed as they change.
//
// The package is internal to the module: package bridge is its only user, and its public
// types (bridge.AuthConfig, bridge.TokenStore, bridge.StoredToken, bridge.FileTokenStore)
// are what hosts see. Config and Grant have exactly the fields of bridge.AuthConfig and
// bridge.StoredToken, so the bridge converts between them without copying field by field.
package oauth

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
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The kinds of Config.Type (bridge.TypeOAuth and bridge.TypeClientCredentials).
const (
	// TypeOAuth is the OAuth 2.1 authorization code flow with PKCE.
	TypeOAuth = "oauth"
	// TypeClientCredentials is the machine-to-machine client credentials grant.
	TypeClientCredentials = "client_credentials"
	// TypeWorkloadIdentity is the jwt-bearer grant with a workload token (workload identity
	// federation).
	TypeWorkloadIdentity = "workload_identity"
	// TypeEnterprise is the jwt-bearer grant with an identity assertion grant the enterprise
	// identity provider issues for the user's ID token (enterprise-managed authorization).
	TypeEnterprise = "enterprise"
)

// Config is how to authorize to one server: the fields of bridge.AuthConfig (documented
// there), in the same order, so that the two convert into each other.
type Config struct {
	Type              string
	Scopes            []string
	ClientID          string
	ClientSecret      string
	TokenEndpointAuth string
	PrivateKey        string
	PrivateKeyFile    string
	SigningAlg        string
	ClientMetadataURL string
	DPoP              string
	DPoPAlg           string
	TokenFile         string
	TokenEnv          string
	TokenCommand      []string
	Audience          string
	IdPIssuer         string
	IdPTokenEndpoint  string
	IdPClientID       string
	IdPClientSecret   string
}

// Grant is one server's OAuth grant as a Store keeps it: the fields and JSON of
// bridge.StoredToken (documented there), so that the two convert into each other.
type Grant struct {
	Server       string        `json:"server"`
	Issuer       string        `json:"issuer,omitempty"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	DPoPKey      string        `json:"dpop_key,omitempty"`
}

// Store keeps grants between runs (bridge.TokenStore, adapted). LoadToken returns nil, nil
// when there is none.
type Store interface {
	LoadToken(ctx context.Context, key string) (*Grant, error)
	SaveToken(ctx context.Context, key string, g *Grant) error
}

// Status is what probe shows about a grant. It holds no secret.
type Status struct {
	Type         string
	GrantType    string    // at the server's authorization server: authorization_code, client_credentials, jwt-bearer
	Binding      string    // "dpop" when the token is bound to the grant's key
	Expiry       time.Time // of the current access token; zero when unknown
	RefreshToken bool      // a refresh token is kept
}

// ErrNeedsLogin is wrapped by the error of a server that requires OAuth when no usable
// token is stored and no authorizer is given (bridge.ErrNeedsLogin is this value).
var ErrNeedsLogin = errors.New("needs login")

// needsLogin names the command that fixes it, with the servers file when the server came
// from one (source is "<file>:<line>").
func needsLogin(id, source, why string) error {
	file := "FILE"
	if i := strings.LastIndexByte(source, ':'); i > 0 {
		file = source[:i]
	}
	return fmt.Errorf("%w: %s; run `mcpbridge login %s %s`", ErrNeedsLogin, why, file, id)
}

// Key is the store key of a server's grant: a hash, so the store never holds the URL's own
// query values.
func Key(serverURL, clientID, typ string) string {
	sum := sha256.Sum256([]byte(serverURL + "\x00" + clientID + "\x00" + typ))
	return hex.EncodeToString(sum[:16])
}

// Settings are what a Handler needs about its server and host.
type Settings struct {
	ID     string // the server's ID, for login hints and the grant's Server
	URL    string // the server's URL, for the store key
	Source string // where the server's config came from ("<file>:<line>"), for login hints
	Auth   Config // checked by Prepare
	Store  Store
	// HTTPClient talks to authorization servers; nil: a client with a 30 s timeout.
	HTTPClient *http.Client
	Log        *slog.Logger
	// RedirectURL and Fetch are the interactive step of the authorization code flow
	// (bridge.Authorizer); Fetch nil: never wait for a person.
	RedirectURL string
	Fetch       auth.AuthorizationCodeFetcher
	// LoginFetch is the person's part of a flow Login starts (a web host's login), used
	// when Fetch is nil; a 401 during a request still fails with ErrNeedsLogin then.
	LoginFetch auth.AuthorizationCodeFetcher
	// User is the user whose grant the handler holds ("" for the host's own grant); it
	// is part of the store key (UserKey).
	User string
	// RefreshJitter spreads proactive refreshes of grants in a Locker store: each grant is
	// refreshed a random part of it earlier than its expiry requires (shared.go).
	RefreshJitter time.Duration
}

// Prepare checks a server's Config and completes it: PrivateKeyFile is read into PrivateKey.
// Errors name the setting, never a secret.
func Prepare(a Config) (Config, error) {
	if a.PrivateKey == "" && a.PrivateKeyFile != "" {
		b, err := os.ReadFile(a.PrivateKeyFile)
		if err != nil {
			return a, fmt.Errorf("auth: private key file: %w", err)
		}
		a.PrivateKey = string(b)
	}
	if _, err := dpopMode(&a); err != nil {
		return a, err
	}
	switch a.Type {
	case TypeOAuth:
	case TypeWorkloadIdentity, TypeEnterprise:
		if err := checkAssertionConfig(&a); err != nil {
			return a, err
		}
	case TypeClientCredentials:
		if a.ClientID == "" {
			return a, errors.New("auth: client_credentials needs client_id")
		}
		if _, err := clientAuthMethod(&a); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("auth: unknown type %q (want %s, %s, %s or %s)", a.Type, TypeOAuth, TypeClientCredentials, TypeWorkloadIdentity, TypeEnterprise)
	}
	return a, nil
}

// Handler implements go-sdk's auth.OAuthHandler for one server: tokens from the store
// (refreshed and saved as they change), the interactive flow only with an authorizer, the
// client credentials grant on its own.
type Handler struct {
	set   Settings
	auth  *Config // &set.Auth
	store Store
	key   string
	hc    *http.Client
	log   *slog.Logger

	mu     sync.Mutex // guards the fields below
	loaded bool
	ts     oauth2.TokenSource // nil until a token is known
	inner  *auth.AuthorizationCodeHandler

	dpop     dpopGrant // the grant's DPoP key, when its tokens are bound
	refusals refusals  // the last workload or ID token a server refused
}

// NewHandler returns the handler of one server; st.Auth must have passed Prepare.
func NewHandler(st Settings) *Handler {
	hc := st.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	h := &Handler{set: st, store: st.Store, key: UserKey(st.URL, st.Auth.ClientID, st.Auth.Type, st.User), log: st.Log}
	h.hc = h.dpop.client(hc)
	h.auth = &h.set.Auth
	return h
}

// WrapTransport puts the MCP connection's requests through DPoP: once the grant's tokens are
// bound, each request with one carries a fresh proof of the grant's key (transport.Spec's
// WrapBase).
func (h *Handler) WrapTransport(base http.RoundTripper) http.RoundTripper {
	return h.dpop.wrapResource(base)
}

// TokenSource implements auth.OAuthHandler: the stored grant, loaded once.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded && h.auth.Type == TypeOAuth {
		h.loaded = true
		st, err := h.store.LoadToken(ctx, h.key)
		if err != nil {
			h.log.Warn("reading the stored OAuth token failed; a login may be needed", "err", err)
		} else if st != nil && st.Token != nil {
			if h.dpop.useStored(st) {
				h.ts = h.persisting(st, st.config().TokenSource(h.tokenCtx(), st.Token))
			} else {
				h.log.Warn("the stored OAuth token's DPoP key cannot be read; a login is needed")
			}
		}
	}
	return h.ts, nil
}

// tokenCtx is the context refreshes run on: not a request's, since a token source outlives it.
func (h *Handler) tokenCtx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
}

func (st *Grant) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
		Scopes:       st.Scopes,
	}
}

// Authorize implements auth.OAuthHandler; go-sdk calls it after a 401 or 403.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.auth.Type != TypeOAuth {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		ts, err := h.machineGrant(ctx, req, resp)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.ts = ts
		h.mu.Unlock()
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && h.refreshNow(ctx, req) {
		resp.Body.Close()
		return nil // the server refused a token that looked valid: retry with a fresh one
	}
	if h.set.Fetch == nil {
		resp.Body.Close()
		why := "the server refused the stored token"
		h.mu.Lock()
		if h.ts == nil {
			why = "no OAuth token is stored for it"
		}
		h.mu.Unlock()
		if resp.StatusCode == http.StatusForbidden {
			why = "the server wants more scopes than the stored token has"
		}
		return needsLogin(h.set.ID, h.set.Source, why)
	}
	inner, err := h.interactive()
	if err != nil {
		resp.Body.Close()
		return err
	}
	if err := h.bindCodeGrant(ctx, req, resp); err != nil {
		resp.Body.Close()
		return err
	}
	defer h.dpop.abandon() // a no-op once the new grant's token arrived
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return err
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// refreshNow refreshes the stored grant at once, whatever its access token's expiry says;
// it reports whether a new token was obtained.
func (h *Handler) refreshNow(ctx context.Context, req *http.Request) bool {
	if _, ok := h.store.(Locker); ok {
		_, refused, _ := strings.Cut(req.Header.Get("Authorization"), " ") // Bearer or DPoP
		return h.refreshShared(ctx, refused)
	}
	st, err := h.store.LoadToken(ctx, h.key)
	if err != nil || st == nil || st.Token == nil || st.Token.RefreshToken == "" || !h.dpop.useStored(st) {
		return false
	}
	stale := *st.Token
	stale.AccessToken = "" // invalid, so the token source refreshes
	ts := h.persisting(st, st.config().TokenSource(h.tokenCtx(), &stale))
	if _, err := ts.Token(); err != nil {
		h.log.Debug("refreshing the OAuth token failed", "err", err)
		return false
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true
}

// interactive returns go-sdk's authorization code handler, created on first use.
func (h *Handler) interactive() (*auth.AuthorizationCodeHandler, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inner != nil {
		return h.inner, nil
	}
	a := h.auth
	c := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              h.set.RedirectURL,
		AuthorizationCodeFetcher: h.fetcher(),
		RequestRefreshToken:      true,
		Client:                   h.hc,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := h.checkBinding(tok); err != nil {
				return nil, err
			}
			key, err := h.dpop.storedKey()
			if err != nil {
				return nil, err
			}
			st := &Grant{
				Server: h.set.ID, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
				AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle),
				Scopes: oc.Scopes, Token: tok, Issuer: origin(oc.Endpoint.TokenURL), DPoPKey: key,
			}
			ts := h.persisting(st, oc.TokenSource(h.tokenCtx(), tok))
			if err := h.store.SaveToken(ctx, h.key, st); err != nil {
				return nil, fmt.Errorf("saving the OAuth token: %w", err)
			}
			return ts, nil
		},
	}
	if len(a.Scopes) > 0 {
		scopes := a.Scopes
		c.ScopeFilter = func([]string) []string { return scopes }
	}
	// go-sdk tries these in order: the client ID metadata document where the authorization
	// server supports one, the pre-registered client, dynamic registration.
	if a.ClientMetadataURL != "" {
		c.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: a.ClientMetadataURL}
	}
	if a.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: a.ClientID}
		if a.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.ClientSecret}
		}
		c.PreregisteredClient = pc
	}
	if a.ClientID == "" {
		c.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{h.set.RedirectURL},
			ClientName:              "mcpbridge",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	h.mu.Unlock()
	st, _ := h.TokenSource(context.Background())
	h.mu.Lock()
	c.InitialTokenSource = st
	inner, err := auth.NewAuthorizationCodeHandler(c)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	h.inner = inner
	return inner, nil
}

// persisting wraps ts so that every new token (a refresh) is saved under the handler's key.
func (h *Handler) persisting(st *Grant, ts oauth2.TokenSource) oauth2.TokenSource {
	if _, ok := h.store.(Locker); ok {
		return h.shared(st, "")
	}
	return &savingSource{h: h, st: *st, ts: ts, last: st.Token.AccessToken}
}

type savingSource struct {
	h  *Handler
	ts oauth2.TokenSource

	mu   sync.Mutex // guards the fields below
	st   Grant
	last string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.ts.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		s.st.Token = tok
		st := s.st
		if err := s.h.store.SaveToken(context.Background(), s.h.key, &st); err != nil {
			s.h.log.Warn("saving the refreshed OAuth token failed", "err", err)
		}
	}
	return tok, nil
}

// Status is what probe shows; it needs the current token, which may refresh it.
func (h *Handler) Status() Status {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	as := Status{Type: h.auth.Type, GrantType: grantType(h.auth.Type)}
	if h.dpop.binding() != nil {
		as.Binding = "dpop"
	}
	if ts == nil {
		return as
	}
	if tok, err := ts.Token(); err == nil {
		as.Expiry, as.RefreshToken = tok.Expiry, tok.RefreshToken != ""
	}
	return as
}

// origin is u's scheme and host, for naming an issuer without its path or query.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}
