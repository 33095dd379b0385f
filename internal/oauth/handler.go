package bridge

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
	"github.com/ttalk/mcpbridge/internal/redact"
	"golang.org/x/oauth2"
)

// The kinds of AuthConfig.Type.
const (
	// AuthOAuth is the OAuth 2.1 authorization code flow with PKCE: discovery, client ID
	// metadata documents, pre-registration or dynamic registration, the resource parameter
	// and issuer checks come from go-sdk's auth package. A person logs in once (mcpbridge
	// login, or Options.Authorizer); tokens are kept in the TokenStore and refreshed.
	AuthOAuth = "oauth"
	// AuthClientCredentials is the machine-to-machine client credentials grant, with
	// client_secret_basic, client_secret_post or private_key_jwt.
	AuthClientCredentials = "client_credentials"
)

// AuthConfig is how the bridge authorizes to a Streamable HTTP server that requires OAuth.
// Its secrets (ClientSecret, PrivateKey) are never logged or put in errors.
type AuthConfig struct {
	// Type is AuthOAuth or AuthClientCredentials.
	Type string
	// Scopes to request. Empty: those of the server's WWW-Authenticate challenge, else its
	// protected resource metadata's scopes_supported.
	Scopes []string
	// ClientID and ClientSecret of a pre-registered client. Optional for AuthOAuth (without
	// them the client registers itself: a client ID metadata document when
	// ClientMetadataURL is set, else dynamic client registration); ClientID is required for
	// AuthClientCredentials.
	ClientID     string
	ClientSecret string
	// TokenEndpointAuth is how the client authenticates at the token endpoint for
	// AuthClientCredentials: "client_secret_basic" (default), "client_secret_post" or
	// "private_key_jwt" (then PrivateKey is required).
	TokenEndpointAuth string
	// PrivateKey is a PEM-encoded RSA, ECDSA (P-256) or Ed25519 private key for
	// private_key_jwt; PrivateKeyFile names a file holding it (servers.yaml's
	// private_key_file), read when the server is dialled.
	PrivateKey     string
	PrivateKeyFile string
	// SigningAlg overrides the JWT algorithm for private_key_jwt ("RS256", "ES256",
	// "EdDSA"); default from the key type.
	SigningAlg string
	// ClientMetadataURL is an https URL of this client's ID metadata document, used as the
	// client ID where the authorization server supports it (else ClientID, else dynamic
	// registration).
	ClientMetadataURL string
}

// Authorizer is the interactive step of the authorization code flow, for a host that can
// reach a person: mcpbridge login uses a loopback redirect (RFC 8252), a web application
// redirects its user. Without one (the default), Connect never waits for a human: a server
// without a usable token is skipped with an error wrapping ErrNeedsLogin.
type Authorizer struct {
	// RedirectURL is where the authorization server sends the browser back.
	RedirectURL string
	// Fetch sends the person to args.URL and returns the code, state and iss from the
	// redirect. ctx bounds it.
	Fetch auth.AuthorizationCodeFetcher
}

// String describes the setting without its secrets: the type, the client ID and the scopes.
func (a *AuthConfig) String() string {
	s := a.Type
	if a.ClientID != "" {
		s += " client_id=" + a.ClientID
	}
	if len(a.Scopes) > 0 {
		s += " scopes=" + strings.Join(a.Scopes, ",")
	}
	if a.ClientSecret != "" || a.PrivateKey != "" || a.PrivateKeyFile != "" {
		s += " credentials=" + redact.Mask
	}
	return s
}

// GoString is String, so %#v cannot print the secrets either.
func (a *AuthConfig) GoString() string { return "bridge.AuthConfig(" + a.String() + ")" }

// LogValue implements slog.LogValuer without the secrets.
func (a *AuthConfig) LogValue() slog.Value { return slog.StringValue(a.String()) }

// ErrNeedsLogin is wrapped by the error of a server that requires OAuth when no usable token
// is stored and no Authorizer is given: run `mcpbridge login FILE ID` once.
var ErrNeedsLogin = errors.New("needs login")

// needsLogin names the command that fixes it, with the servers file when cfg came from one.
func needsLogin(cfg ServerConfig, why string) error {
	file := "FILE"
	if i := strings.LastIndexByte(cfg.Source, ':'); i > 0 {
		file = cfg.Source[:i]
	}
	return fmt.Errorf("%w: %s; run `mcpbridge login %s %s`", ErrNeedsLogin, why, file, cfg.ID)
}

// TokenStore keeps OAuth tokens between runs. Keys are opaque strings the bridge derives from
// the server's URL and client; values hold the access token, the refresh token and what is
// needed to refresh it. Implementations must be safe for concurrent use. The default is a
// FileTokenStore.
type TokenStore interface {
	LoadToken(ctx context.Context, key string) (*StoredToken, error) // nil, nil when there is none
	SaveToken(ctx context.Context, key string, t *StoredToken) error
	DeleteToken(ctx context.Context, key string) error
}

// StoredToken is one server's OAuth grant as kept in a TokenStore.
type StoredToken struct {
	Server       string        `json:"server"` // the server ID it was obtained for (informational)
	Issuer       string        `json:"issuer,omitempty"`
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

// AuthStatus is what probe shows about a server's OAuth grant. It holds no secret.
type AuthStatus struct {
	Type         string    `json:"type"`
	Expiry       time.Time `json:"expiry,omitzero"` // of the current access token; zero when unknown
	RefreshToken bool      `json:"refreshToken"`    // a refresh token is kept
}

// tokenKey is the store key of cfg's grant: a hash, so the store never holds the URL's own
// query values.
func tokenKey(cfg ServerConfig) string {
	sum := sha256.Sum256([]byte(cfg.URL + "\x00" + cfg.Auth.ClientID + "\x00" + cfg.Auth.Type))
	return hex.EncodeToString(sum[:16])
}

// oauthHandler implements go-sdk's auth.OAuthHandler for one server: tokens from the store
// (refreshed and saved as they change), the interactive flow only with an Authorizer, the
// client credentials grant on its own.
type oauthHandler struct {
	cfg   ServerConfig
	store TokenStore
	key   string
	hc    *http.Client
	log   *slog.Logger
	authz *Authorizer

	mu     sync.Mutex // guards the fields below
	loaded bool
	ts     oauth2.TokenSource // nil until a token is known
	inner  *auth.AuthorizationCodeHandler
}

func newOAuthHandler(cfg ServerConfig, o *options, log *slog.Logger) (*oauthHandler, error) {
	a := cfg.Auth
	switch a.Type {
	case AuthOAuth:
	case AuthClientCredentials:
		if a.PrivateKey == "" && a.PrivateKeyFile != "" {
			b, err := os.ReadFile(a.PrivateKeyFile)
			if err != nil {
				return nil, fmt.Errorf("auth: private key file: %w", err)
			}
			copied := *a
			copied.PrivateKey = string(b)
			a = &copied
			cfg.Auth = a
		}
		if a.ClientID == "" {
			return nil, errors.New("auth: client_credentials needs client_id")
		}
		if _, err := clientAuthMethod(a); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("auth: unknown type %q (want %s or %s)", a.Type, AuthOAuth, AuthClientCredentials)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	store := o.TokenStore
	if store == nil {
		fs, err := DefaultTokenStore()
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		store = fs
	}
	return &oauthHandler{cfg: cfg, store: store, key: tokenKey(cfg), hc: hc, log: log, authz: o.Authorizer}, nil
}

// TokenSource implements auth.OAuthHandler: the stored grant, loaded once.
func (h *oauthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded && h.cfg.Auth.Type == AuthOAuth {
		h.loaded = true
		st, err := h.store.LoadToken(ctx, h.key)
		if err != nil {
			h.log.Warn("reading the stored OAuth token failed; a login may be needed", "err", err)
		} else if st != nil && st.Token != nil {
			h.ts = h.persisting(st, st.oauth2Config().TokenSource(h.tokenCtx(), st.Token))
		}
	}
	return h.ts, nil
}

// tokenCtx is the context refreshes run on: not a request's, since a token source outlives it.
func (h *oauthHandler) tokenCtx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
}

func (st *StoredToken) oauth2Config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
		Scopes:       st.Scopes,
	}
}

// Authorize implements auth.OAuthHandler; go-sdk calls it after a 401 or 403.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.cfg.Auth.Type == AuthClientCredentials {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		ts, err := h.clientCredentials(ctx, req, resp)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.ts = ts
		h.mu.Unlock()
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && h.refreshNow(ctx) {
		resp.Body.Close()
		return nil // the server refused a token that looked valid: retry with a fresh one
	}
	if h.authz == nil || h.authz.Fetch == nil {
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
		return needsLogin(h.cfg, why)
	}
	inner, err := h.interactive()
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
	h.mu.Unlock()
	return nil
}

// refreshNow refreshes the stored grant at once, whatever its access token's expiry says;
// it reports whether a new token was obtained.
func (h *oauthHandler) refreshNow(ctx context.Context) bool {
	st, err := h.store.LoadToken(ctx, h.key)
	if err != nil || st == nil || st.Token == nil || st.Token.RefreshToken == "" {
		return false
	}
	stale := *st.Token
	stale.AccessToken = "" // invalid, so the token source refreshes
	ts := h.persisting(st, st.oauth2Config().TokenSource(h.tokenCtx(), &stale))
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
func (h *oauthHandler) interactive() (*auth.AuthorizationCodeHandler, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inner != nil {
		return h.inner, nil
	}
	a := h.cfg.Auth
	c := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              h.authz.RedirectURL,
		AuthorizationCodeFetcher: h.authz.Fetch,
		RequestRefreshToken:      true,
		Client:                   h.hc,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			st := &StoredToken{
				Server: h.cfg.ID, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
				AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle),
				Scopes: oc.Scopes, Token: tok, Issuer: origin(oc.Endpoint.TokenURL),
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
			RedirectURIs:            []string{h.authz.RedirectURL},
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
func (h *oauthHandler) persisting(st *StoredToken, ts oauth2.TokenSource) oauth2.TokenSource {
	return &savingSource{h: h, st: *st, ts: ts, last: st.Token.AccessToken}
}

type savingSource struct {
	h  *oauthHandler
	ts oauth2.TokenSource

	mu   sync.Mutex // guards the fields below
	st   StoredToken
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

// status is what probe shows; it needs the current token, which may refresh it.
func (h *oauthHandler) status() *AuthStatus {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	as := &AuthStatus{Type: h.cfg.Auth.Type}
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

// Logout forgets the stored OAuth grant of cfg (no-op when there is none or cfg has no
// OAuth). opts may be nil; its TokenStore is used when set.
func Logout(ctx context.Context, cfg ServerConfig, opts *Options) error {
	if cfg.Auth == nil {
		return nil
	}
	store := TokenStore(nil)
	if opts != nil {
		store = opts.TokenStore
	}
	if store == nil {
		fs, err := DefaultTokenStore()
		if err != nil {
			return err
		}
		store = fs
	}
	return store.DeleteToken(ctx, tokenKey(cfg))
}
