// Package oauthtest is a local OAuth 2.1 authorization server in front of a go-sdk MCP server
// that requires its bearer tokens, for the tests of package bridge and of mcpbridge login.
// Only test files import it.
//
// The authorization server has RFC 8414 metadata, RFC 7591 dynamic registration, the
// authorization code grant with PKCE S256 (its authorization endpoint plays the person who
// consents at once: it redirects straight back with a code), refresh tokens that rotate, and
// the client credentials grant with client_secret_basic, client_secret_post and
// private_key_jwt (ES256). The MCP server publishes RFC 9728 protected resource metadata and
// answers 401 with WWW-Authenticate. Both listen on 127.0.0.1.
//
// The authorization extensions (ext.go): DPoP (RFC 9449) on the token endpoint and the MCP
// server, with server nonces and a skewed clock on request; the jwt-bearer grant (RFC 7523)
// with workload tokens of a trusted issuer; and an enterprise identity provider that
// exchanges its ID tokens for identity assertion grants (RFC 8693), which the jwt-bearer
// grant takes.
package oauthtest

import (
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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Server is the authorization server and the MCP server it protects.
type Server struct {
	as  *httptest.Server
	mcp *httptest.Server

	mu       sync.Mutex // guards the fields below
	ttl      time.Duration
	deny     bool
	clients  map[string]string           // client_id -> secret ("" for public clients)
	jwtKeys  map[string]*ecdsa.PublicKey // client_id -> private_key_jwt verification key
	codes    map[string]authCode
	access   map[string]accessToken // access token -> expiry and binding
	refresh  map[string]string      // live refresh tokens -> the jkt they are bound to ("": none)
	grants   map[string]int         // grant_type -> count
	resource []string               // resource parameters seen at the token endpoint
	issued   []string               // every access and refresh token and code handed out
	users    usersState             // whose tokens are whose (users.go)

	unprotected http.Handler // the MCP handler without the token check, for AllowAnonymous

	ext // DPoP, jwt-bearer and the identity provider (ext.go)
}

// accessToken is an issued access token: its expiry and, when bound, its key's thumbprint.
type accessToken struct {
	exp time.Time
	jkt string
}

type authCode struct {
	clientID, challenge, redirect string
	user                          string // the login_hint of the authorization request
}

// New starts both servers; srv answers MCP requests that carry a valid token. Close stops them.
func New(srv *mcp.Server) *Server { return NewWith(srv, nil) }

// NewWith is New with the options of the MCP server's Streamable HTTP handler (e.g.
// Stateless: a server on protocol 2026-07-28 that keeps no session).
func NewWith(srv *mcp.Server, opts *mcp.StreamableHTTPOptions) *Server {
	return NewHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
}

// NewHandler is New with the MCP endpoint's handler itself: a go-sdk handler wrapped by a
// test that answers some requests its own way.
func NewHandler(mh http.Handler) *Server {
	a := &Server{ttl: time.Hour, clients: map[string]string{}, jwtKeys: map[string]*ecdsa.PublicKey{},
		codes: map[string]authCode{}, access: map[string]accessToken{}, refresh: map[string]string{}, grants: map[string]int{}}
	a.ext.init()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	a.as = httptest.NewServer(a.clocked(mux))

	m := http.NewServeMux()
	m.Handle("GET /.well-known/oauth-protected-resource/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		bound := a.dpop.ResourceRequiresBound
		a.mu.Unlock()
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: a.URL(), AuthorizationServers: []string{a.as.URL}, ScopesSupported: []string{"read"},
			DPOPBoundAccessTokensRequired: bound,
		}).ServeHTTP(w, r)
	}))
	a.unprotected = mh
	m.Handle("/mcp", a.anonymous(a.protect(a.withUser(mh))))
	a.mcp = httptest.NewServer(a.clocked(m))
	return a
}

// Close stops the servers.
func (a *Server) Close() {
	a.mcp.Close()
	a.as.Close()
	if a.idp != nil {
		a.idp.srv.Close()
	}
}

// URL is the MCP server's endpoint.
func (a *Server) URL() string { return a.mcp.URL + "/mcp" }

// Issuer is the authorization server's issuer URL.
func (a *Server) Issuer() string { return a.as.URL }

// AddClient pre-registers a confidential client.
func (a *Server) AddClient(id, secret string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients[id] = secret
}

// AddJWTClient pre-registers a client that authenticates with private_key_jwt (ES256, key).
func (a *Server) AddJWTClient(id string, key *ecdsa.PublicKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.jwtKeys[id] = key
}

// Deny makes the authorization endpoint redirect back with error=access_denied, as when the
// person refuses.
func (a *Server) Deny(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deny = on
}

// SetTTL sets the lifetime of access tokens issued from now on.
func (a *Server) SetTTL(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ttl = d
}

// Count is how many token requests of grant ("authorization_code", "refresh_token",
// "client_credentials", the jwt-bearer URN) were answered (past any DPoP challenge).
func (a *Server) Count(grant string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[grant]
}

// Resources are the resource parameters the token endpoint saw, in order.
func (a *Server) Resources() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.resource)
}

// Issued is every access token, refresh token and authorization code handed out: what must
// never appear in a log or in output.
func (a *Server) Issued() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.issued)
}

// ExpireAll makes every access token invalid, as time passing would.
func (a *Server) ExpireAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

// RevokeRefresh revokes every refresh token.
func (a *Server) RevokeRefresh() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
}

func (a *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                a.as.URL,
		"authorization_endpoint":                a.as.URL + "/authorize",
		"token_endpoint":                        a.as.URL + "/token",
		"registration_endpoint":                 a.as.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials", jwtBearer},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
		"scopes_supported":                      []string{"read", "offline_access"},
	}
	a.mu.Lock()
	if a.dpop.Algs != nil {
		m["dpop_signing_alg_values_supported"] = a.dpop.Algs
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, m)
}

func (a *Server) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := randomString()
	a.mu.Lock()
	a.clients[id] = ""
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize plays the person who consents at once (or refuses, after Deny): it redirects
// back with a code.
func (a *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	_, known := a.clients[q.Get("client_id")]
	deny := a.deny
	a.mu.Unlock()
	if !known || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	to, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || to.Scheme != "http" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := to.Query()
	v.Set("state", q.Get("state"))
	if deny {
		v.Set("error", "access_denied")
		v.Set("error_description", "the person said no")
	} else {
		code := randomString()
		a.mu.Lock()
		a.codes[code] = authCode{clientID: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), user: q.Get("login_hint")}
		a.issued = append(a.issued, code)
		a.mu.Unlock()
		v.Set("code", code)
	}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (a *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	a.mu.Lock()
	defer a.mu.Unlock()
	jkt, ok := a.tokenProof(w, r)
	if !ok {
		return
	}
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
		a.issueFor(w, true, jkt, c.user)
	case "refresh_token":
		rt := f.Get("refresh_token")
		bound, live := a.refresh[rt]
		if !live || bound != jkt {
			if !live {
				a.users.spentAgain(rt)
			}
			fail("invalid_grant") // unknown, or bound to another key than the proof's
			return
		}
		delete(a.refresh, rt) // rotation
		a.issueFor(w, true, jkt, a.users.owner[rt])
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
		a.issue(w, false, jkt)
	case jwtBearer:
		a.jwtBearer(w, r, jkt)
	default:
		fail("unsupported_grant_type")
	}
}

// issue answers with a fresh access token (and refresh token), bound to the key with
// thumbprint jkt when it is not "" and the server does not misbehave; a.mu is held.
func (a *Server) issue(w http.ResponseWriter, withRefresh bool, jkt string) {
	a.issueFor(w, withRefresh, jkt, "")
}

// issueFor is issue for the tokens of user ("" for none; users.go); a.mu is held.
func (a *Server) issueFor(w http.ResponseWriter, withRefresh bool, jkt, user string) {
	if a.dpop.Unbound {
		jkt = ""
	}
	at := randomString()
	a.users.own(at, user)
	a.access[at] = accessToken{exp: time.Now().Add(a.ttl), jkt: jkt}
	a.issued = append(a.issued, at)
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	resp := map[string]any{"access_token": at, "token_type": typ, "expires_in": int(a.ttl / time.Second)}
	if withRefresh {
		rt := randomString()
		a.users.own(rt, user)
		a.refresh[rt] = jkt
		a.issued = append(a.issued, rt)
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
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

// ECKeyPEM returns a new P-256 key as PKCS#8 PEM and its public half, for AddJWTClient.
func ECKeyPEM() (string, *ecdsa.PublicKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", nil, err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), &k.PublicKey, nil
}
