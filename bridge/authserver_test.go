package bridge_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is a local OAuth 2.1 authorization server (RFC 8414 metadata, RFC 7591
// registration, authorization code with PKCE S256, refresh tokens that rotate, client
// credentials with client_secret_basic/post and private_key_jwt) in front of a go-sdk MCP
// server that requires its bearer tokens (RFC 9728 metadata, WWW-Authenticate).
type authServer struct {
	t   testing.TB
	as  *httptest.Server
	mcp *httptest.Server

	ttl time.Duration // access token lifetime

	mu       sync.Mutex
	clients  map[string]string           // client_id -> secret ("" for public clients)
	jwtKeys  map[string]*ecdsa.PublicKey // client_id -> private_key_jwt verification key
	codes    map[string]authCode
	access   map[string]time.Time // access token -> expiry
	refresh  map[string]bool      // live refresh tokens
	grants   map[string]int       // grant_type -> count
	resource []string             // resource parameters seen at the token endpoint
}

type authCode struct {
	clientID, challenge, redirect string
}

func newAuthServer(t testing.TB, srv *mcp.Server) *authServer {
	t.Helper()
	a := &authServer{t: t, ttl: time.Hour, clients: map[string]string{}, jwtKeys: map[string]*ecdsa.PublicKey{},
		codes: map[string]authCode{}, access: map[string]time.Time{}, refresh: map[string]bool{}, grants: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	a.as = httptest.NewServer(mux)
	t.Cleanup(a.as.Close)

	var mcpURL string
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		exp, ok := a.access[tok]
		if !ok || time.Now().After(exp) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: exp, Scopes: []string{"read"}}, nil
	}
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: "", Scopes: nil})
	m := http.NewServeMux()
	m.Handle("GET /.well-known/oauth-protected-resource/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: mcpURL, AuthorizationServers: []string{a.as.URL}, ScopesSupported: []string{"read"},
		}).ServeHTTP(w, r)
	}))
	m.Handle("/mcp", protected(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	a.mcp = httptest.NewServer(m)
	t.Cleanup(a.mcp.Close)
	mcpURL = a.mcp.URL + "/mcp"
	return a
}

func (a *authServer) url() string { return a.mcp.URL + "/mcp" }

func (a *authServer) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                a.as.URL,
		"authorization_endpoint":                a.as.URL + "/authorize",
		"token_endpoint":                        a.as.URL + "/token",
		"registration_endpoint":                 a.as.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
		"scopes_supported":                      []string{"read", "offline_access"},
	})
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := randomString()
	a.mu.Lock()
	a.clients[id] = ""
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize plays the user who consents at once: it redirects with a code.
func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	_, known := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	if !known || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := randomString()
	a.mu.Lock()
	a.codes[code] = authCode{clientID: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	a.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	v := to.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grants[f.Get("grant_type")]++
	if res := f.Get("resource"); res != "" {
		a.resource = append(a.resource, res)
	}
	fail := func(code string) { writeJSON(w, http.StatusBadRequest, map[string]string{"error": code}) }
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := a.codes[f.Get("code")]
		delete(a.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || c.clientID != f.Get("client_id") || c.redirect != f.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			fail("invalid_grant")
			return
		}
		a.issue(w, true)
	case "refresh_token":
		if !a.refresh[f.Get("refresh_token")] {
			fail("invalid_grant")
			return
		}
		delete(a.refresh, f.Get("refresh_token")) // rotation
		a.issue(w, true)
	case "client_credentials":
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = f.Get("client_id"), f.Get("client_secret")
		}
		if key := a.jwtKeys[id]; key != nil {
			if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || !verifyES256(f.Get("client_assertion"), key, id, a.as.URL) {
				fail("invalid_client")
				return
			}
		} else if want, ok := a.clients[id]; !ok || want == "" || want != secret {
			fail("invalid_client")
			return
		}
		a.issue(w, false)
	default:
		fail("unsupported_grant_type")
	}
}

// issue answers with a fresh access token (and refresh token); a.mu is held.
func (a *authServer) issue(w http.ResponseWriter, withRefresh bool) {
	at := randomString()
	a.access[at] = time.Now().Add(a.ttl)
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(a.ttl / time.Second)}
	if withRefresh {
		rt := randomString()
		a.refresh[rt] = true
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// expireAll makes every access token invalid, as time passing would.
func (a *authServer) expireAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

// revokeRefresh revokes every refresh token.
func (a *authServer) revokeRefresh() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
}

func (a *authServer) count(grant string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[grant]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomString() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// verifyES256 checks a private_key_jwt assertion: signature, iss/sub, aud, expiry.
func verifyES256(jwt string, key *ecdsa.PublicKey, clientID, audience string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	return json.Unmarshal(body, &c) == nil && c.Iss == clientID && c.Sub == clientID && c.Aud == audience && time.Now().Unix() < c.Exp
}

// ecKeyPEM returns a new P-256 key as PKCS#8 PEM and its public half.
func ecKeyPEM(t testing.TB) (string, *ecdsa.PublicKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), &k.PublicKey
}
