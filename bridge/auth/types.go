package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/ttalk/mcpbridge/internal/redact"
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
	// AuthWorkloadIdentity is workload identity federation: the RFC 7523 jwt-bearer grant
	// with a token the platform issues to the workload (a Kubernetes projected service
	// account token, a CI system's OIDC token), read fresh from TokenFile, TokenEnv or
	// TokenCommand for every grant. No secret is kept and no person is involved.
	AuthWorkloadIdentity = "workload_identity"
	// AuthEnterprise is enterprise-managed authorization: the user's ID token from the
	// company's identity provider (TokenFile, TokenEnv or TokenCommand) is exchanged there
	// (RFC 8693) for an identity assertion grant for the MCP server, which the server's
	// authorization server takes in the jwt-bearer grant. Headless: single sign-on happened
	// before.
	AuthEnterprise = "enterprise"
)

// AuthConfig is how the bridge authorizes to a Streamable HTTP server that requires OAuth.
// Its secrets (ClientSecret, PrivateKey) are never logged or put in errors.
type AuthConfig struct {
	// Type is AuthOAuth, AuthClientCredentials, AuthWorkloadIdentity or AuthEnterprise.
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

	// DPoP binds tokens to a key pair of the grant (RFC 9449): DPoPAuto ("" too) when the
	// authorization server's metadata lists dpop_signing_alg_values_supported or the
	// resource's requires bound tokens, DPoPOn always, DPoPOff never. Any Type.
	DPoP string
	// DPoPAlg is the proof algorithm, "ES256" (P-256) or "EdDSA" (Ed25519); default ES256
	// unless the server accepts only EdDSA.
	DPoPAlg string

	// TokenFile, TokenEnv and TokenCommand (exactly one) say where the workload token
	// (AuthWorkloadIdentity) or the user's ID token (AuthEnterprise) is read from, fresh
	// for every grant: a file, an environment variable, or a program and its arguments
	// that print it (no shell; run with MCPBRIDGE_AUDIENCE and MCPBRIDGE_RESOURCE set).
	TokenFile    string
	TokenEnv     string
	TokenCommand []string
	// Audience is what the workload token's aud must name; default the authorization
	// server's issuer or token endpoint. A token for another audience is not sent.
	Audience string

	// IdPIssuer is the enterprise identity provider's issuer URL (its token endpoint is
	// discovered there), or IdPTokenEndpoint names the endpoint itself. IdPClientID and
	// IdPClientSecret are this client's registration at the identity provider
	// (AuthEnterprise); ClientID and ClientSecret are its registration at the MCP server's
	// authorization server.
	IdPIssuer        string
	IdPTokenEndpoint string
	IdPClientID      string
	IdPClientSecret  string
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
	Fetch sdkauth.AuthorizationCodeFetcher
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
	if a.IdPIssuer != "" || a.IdPTokenEndpoint != "" {
		s += " idp=" + origin(a.IdPIssuer+a.IdPTokenEndpoint)
	}
	switch {
	case a.TokenFile != "":
		s += " token_file=" + a.TokenFile
	case a.TokenEnv != "":
		s += " token_env=" + a.TokenEnv
	case len(a.TokenCommand) > 0:
		s += " token_command=" + a.TokenCommand[0]
	}
	if a.DPoP != "" {
		s += " dpop=" + a.DPoP
	}
	if a.ClientSecret != "" || a.PrivateKey != "" || a.PrivateKeyFile != "" || a.IdPClientSecret != "" {
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

// LoginReason says why a user must log in to a server (bridge.NeedsLoginError.Reason): one of
// the Reason constants. Its text is what the error says.
type LoginReason string

// The reasons a user must log in.
const (
	// ReasonNoGrant: no grant is stored for the user; the user never logged in to the server,
	// or logged out (the grant was forgotten).
	ReasonNoGrant LoginReason = "no grant is stored for the user"
	// ReasonGrantRefused: the server refused the user's grant and it could not be refreshed
	// (revoked, expired, or short of scopes the server wants).
	ReasonGrantRefused LoginReason = "the server refused the user's grant and it could not be refreshed"
)

// ErrTokenStore is wrapped by the error of a request whose grant could not be read, locked or
// refreshed because the TokenStore failed (a shared store down or slow) while the server
// refused the token in use. The grant may well be fine: retry later; sending the user to log
// in would not help, the login's grant could not be stored either.
var ErrTokenStore = errors.New("the token store failed")

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
	// DPoPKey is the grant's DPoP private key (base64 PKCS#8) when its tokens are bound to
	// one: a secret like the tokens.
	DPoPKey string `json:"dpop_key,omitempty"`
}

// AuthStatus is what probe shows about a server's OAuth grant. It holds no secret.
type AuthStatus struct {
	Type         string    `json:"type"`
	GrantType    string    `json:"grantType,omitempty"` // at the MCP server's authorization server: authorization_code, client_credentials, jwt-bearer
	Binding      string    `json:"binding,omitempty"`   // "dpop" when the token is bound to a key (RFC 9449); "" for a bearer token
	Expiry       time.Time `json:"expiry,omitzero"`     // of the current access token; zero when unknown
	RefreshToken bool      `json:"refreshToken"`        // a refresh token is kept
}

// FileTokenStore keeps tokens in one JSON file readable only by its owner (0600, in a 0700
// directory). It refuses to read a file that group or others can read (on Unix). Safe for
// concurrent use within one process; writes replace the file atomically.
type FileTokenStore struct {
	Path string

	mu sync.Mutex // serialises read-modify-write of the file
}

// DefaultTokenStore is the per-user token file: <user config dir>/mcpbridge/tokens.json
// (e.g. ~/.config/mcpbridge/tokens.json on Linux, ~/Library/Application Support on macOS,
// %AppData% on Windows).
func DefaultTokenStore() (*FileTokenStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("no per-user config directory for the token store: %w", err)
	}
	return &FileTokenStore{Path: filepath.Join(dir, "mcpbridge", "tokens.json")}, nil
}

// LoadToken implements TokenStore.
func (s *FileTokenStore) LoadToken(_ context.Context, key string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := readFile[StoredToken](s.Path)
	if err != nil {
		return nil, err
	}
	return m[key], nil
}

// SaveToken implements TokenStore.
func (s *FileTokenStore) SaveToken(_ context.Context, key string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := readFile[StoredToken](s.Path)
	if err != nil {
		return err
	}
	m[key] = t
	return writeFile(s.Path, m)
}

// DeleteToken implements TokenStore.
func (s *FileTokenStore) DeleteToken(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := readFile[StoredToken](s.Path)
	if err != nil {
		return err
	}
	if _, ok := m[key]; !ok {
		return nil
	}
	delete(m, key)
	return writeFile(s.Path, m)
}

// TokenLocker is a TokenStore shared by several processes (replicas of a web host) that can
// lock one key across all of them. With one, the bridge refreshes a grant only while it
// holds the grant's lock, after reading the grant again, so that two replicas never both
// spend a refresh token the authorization server rotates (the second would be refused, or
// worse, revoke the grant); grants are also refreshed proactively with jitter
// (UserOptions.RefreshJitter). bridge/redisstore is one.
type TokenLocker interface {
	TokenStore
	// LockToken waits until it holds the lock on key or ctx ends; the lock expires after
	// ttl if it is never released. unlock releases it, only if it is still held.
	LockToken(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// Logout forgets the stored OAuth grant of the server at serverURL authorized with a, in
// store (no-op when there is none or a is nil). A nil store means DefaultTokenStore().
func Logout(ctx context.Context, serverURL string, a *AuthConfig, store TokenStore) error {
	if a == nil {
		return nil
	}
	if store == nil {
		fs, err := DefaultTokenStore()
		if err != nil {
			return err
		}
		store = fs
	}
	return store.DeleteToken(ctx, Key(serverURL, a.ClientID, a.Type))
}
