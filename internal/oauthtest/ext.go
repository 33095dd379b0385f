package oauthtest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"
)

const (
	jwtBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	typeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	typeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	// proofWindow is how far a DPoP proof's iat may be from the server's clock.
	proofWindow = 60 * time.Second
)

// NonceMode is how a server uses DPoP nonces (RFC 9449 sections 8 and 9).
type NonceMode int

const (
	// NoNonce: proofs need no nonce.
	NoNonce NonceMode = iota
	// Nonce: proofs must carry the server's nonce; one without it is challenged once with
	// use_dpop_nonce and the nonce in DPoP-Nonce.
	Nonce
	// NonceEvery: as Nonce, and every response carries a new nonce (the last four stay
	// valid).
	NonceEvery
	// NonceEndless: every proof is challenged with a new nonce, whatever it carries.
	NonceEndless
)

// DPoPOptions set the DPoP behaviour of the authorization server and the MCP server.
type DPoPOptions struct {
	// Algs is the authorization server's dpop_signing_alg_values_supported; nil leaves
	// it out of the metadata. Proofs must use one of them when it is not empty.
	Algs []string
	// Require makes the token endpoint refuse token requests without a proof.
	Require bool
	// Unbound makes the authorization server misbehave: it checks proofs but issues
	// Bearer tokens.
	Unbound bool
	// ResourceRequiresBound sets dpop_bound_access_tokens_required in the protected
	// resource metadata.
	ResourceRequiresBound bool
	// ASNonce and RSNonce are the nonce modes of the token endpoint and the MCP server.
	ASNonce, RSNonce NonceMode
}

// DPoPStats count what the servers saw of DPoP.
type DPoPStats struct {
	TokenProofs    int // valid proofs at the token endpoint
	ResourceProofs int // valid proofs with a bound token at the MCP server
	Challenges     int // use_dpop_nonce answers, both servers
	Refused        int // invalid_dpop_proof answers, both servers
	BearerRequests int // MCP requests with a Bearer token
}

// ext is the authorization extensions' state of a Server; Server.mu guards it.
type ext struct {
	dpop      DPoPOptions
	skew      time.Duration
	nonces    map[string][]string // server ("as", "rs") -> valid nonces, newest last
	jtis      map[string]bool
	stats     DPoPStats
	workloads map[string]*ecdsa.PublicKey // trusted workload token issuer -> key
	idp       *IdP
}

func (e *ext) init() {
	e.nonces = map[string][]string{}
	e.jtis = map[string]bool{}
	e.workloads = map[string]*ecdsa.PublicKey{}
}

// SetDPoP sets the servers' DPoP behaviour.
func (a *Server) SetDPoP(o DPoPOptions) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.dpop = o
}

// SetClockSkew makes the servers' clock run d ahead of the real one (behind when d < 0):
// their Date headers and their checks of a proof's iat. Token lifetimes stay real.
func (a *Server) SetClockSkew(d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.skew = d
}

// DPoP returns what the servers saw of DPoP so far.
func (a *Server) DPoP() DPoPStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

// now is the servers' clock; a.mu is held.
func (a *Server) now() time.Time { return time.Now().Add(a.skew) }

// clocked sets the Date header of every response from the servers' clock.
func (a *Server) clocked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		now := a.now()
		a.mu.Unlock()
		w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
		h.ServeHTTP(w, r)
	})
}

// nonce hands out a new nonce of server (on the response's DPoP-Nonce); a.mu is held.
func (a *Server) nonce(w http.ResponseWriter, server string) {
	n := randomString()
	a.nonces[server] = append(a.nonces[server], n)
	if len(a.nonces[server]) > 4 {
		a.nonces[server] = a.nonces[server][1:]
	}
	w.Header().Set("DPoP-Nonce", n)
}

// nonceOK applies mode to a proof's nonce: whether it is accepted; a.mu is held.
func (a *Server) nonceOK(mode NonceMode, server, got string) bool {
	switch mode {
	case NoNonce:
		return true
	case NonceEndless:
		return false
	}
	return got != "" && slices.Contains(a.nonces[server], got)
}

// tokenProof checks the DPoP proof of a token request: it returns the thumbprint of the
// proof's key ("" without a proof), or answers the request itself and returns false; a.mu
// is held.
func (a *Server) tokenProof(w http.ResponseWriter, r *http.Request) (string, bool) {
	o := a.dpop
	if o.Algs == nil && !o.Require && o.ASNonce == NoNonce {
		return "", true
	}
	if o.ASNonce == NonceEvery {
		a.nonce(w, "as")
	}
	if len(r.Header.Values("DPoP")) == 0 {
		if o.Require {
			a.stats.Refused++
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_dpop_proof", "error_description": "a DPoP proof is required"})
			return "", false
		}
		return "", true
	}
	p, err := a.checkProof(r, a.as.URL+"/token", "")
	if err != nil {
		a.stats.Refused++
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_dpop_proof", "error_description": err.Error()})
		return "", false
	}
	if !a.nonceOK(o.ASNonce, "as", p.nonce) {
		a.stats.Challenges++
		if o.ASNonce != NonceEvery {
			a.nonce(w, "as")
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "use_dpop_nonce", "error_description": "a DPoP nonce is required"})
		return "", false
	}
	a.stats.TokenProofs++
	return p.jkt, true
}

// protect lets through MCP requests with a live access token: a Bearer token as such, a
// bound token only in the DPoP scheme with a valid proof of its key.
func (a *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		ok := a.admit(w, r)
		a.mu.Unlock()
		if ok {
			next.ServeHTTP(w, r)
		}
	})
}

// admit checks one MCP request's token and proof, answering it when they fail; a.mu is held.
func (a *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	o := a.dpop
	meta := fmt.Sprintf(`resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, a.mcp.URL)
	scheme := "Bearer"
	if o.Algs != nil || o.ResourceRequiresBound {
		scheme = "DPoP"
	}
	refuse := func(params string) bool {
		w.Header().Set("WWW-Authenticate", scheme+" "+params)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return false
	}
	if o.RSNonce == NonceEvery {
		a.nonce(w, "rs")
	}
	kind, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	t, live := a.access[tok]
	if !live || time.Now().After(t.exp) {
		return refuse(meta)
	}
	switch {
	case t.jkt == "" && strings.EqualFold(kind, "Bearer"):
		a.stats.BearerRequests++
		return true
	case t.jkt == "" || !strings.EqualFold(kind, "DPoP"):
		return refuse(`error="invalid_token", error_description="wrong authorization scheme for this token", ` + meta)
	}
	scheme = "DPoP"
	p, err := a.checkProof(r, a.URL(), tok)
	if err == nil && p.jkt != t.jkt {
		err = errors.New("the proof's key is not the one the token is bound to")
	}
	if err != nil {
		a.stats.Refused++
		return refuse(fmt.Sprintf(`error="invalid_dpop_proof", error_description="%s", %s`, err, meta))
	}
	if !a.nonceOK(o.RSNonce, "rs", p.nonce) {
		a.stats.Challenges++
		if o.RSNonce != NonceEvery {
			a.nonce(w, "rs")
		}
		return refuse(`error="use_dpop_nonce", error_description="a DPoP nonce is required", ` + meta)
	}
	a.stats.ResourceProofs++
	return true
}

// proof is what a valid DPoP proof says.
type proof struct {
	jkt, nonce string
}

// checkProof verifies r's DPoP proof (RFC 9449 section 4.3) for target and, when token is
// given, its ath; a.mu is held.
func (a *Server) checkProof(r *http.Request, target, token string) (*proof, error) {
	vals := r.Header.Values("DPoP")
	if len(vals) != 1 {
		return nil, errors.New("not exactly one DPoP header")
	}
	parts := strings.Split(vals[0], ".")
	if len(parts) != 3 {
		return nil, errors.New("the proof is not a JWS")
	}
	var h struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}
	var c struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   int64  `json:"iat"`
		ATH   string `json:"ath"`
		Nonce string `json:"nonce"`
	}
	if err := decodePart(parts[0], &h); err != nil {
		return nil, err
	}
	if err := decodePart(parts[1], &c); err != nil {
		return nil, err
	}
	switch {
	case h.Typ != "dpop+jwt":
		return nil, errors.New("typ is not dpop+jwt")
	case len(a.dpop.Algs) > 0 && !slices.Contains(a.dpop.Algs, h.Alg):
		return nil, errors.New("alg not accepted")
	case h.JWK["d"] != "":
		return nil, errors.New("the jwk holds a private key")
	}
	jkt, err := verifyJWS(parts, h.Alg, h.JWK)
	if err != nil {
		return nil, err
	}
	now := a.now()
	switch {
	case c.JTI == "" || a.jtis[c.JTI]:
		return nil, errors.New("jti missing or replayed")
	case c.HTM != r.Method:
		return nil, errors.New("htm does not match")
	case strings.ContainsAny(c.HTU, "?#") || strings.TrimSuffix(c.HTU, "/") != strings.TrimSuffix(target, "/"):
		return nil, errors.New("htu does not match")
	case time.Unix(c.IAT, 0).Sub(now).Abs() > proofWindow:
		return nil, errors.New("iat is outside the window")
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return nil, errors.New("ath does not match the token")
		}
	}
	a.jtis[c.JTI] = true
	return &proof{jkt: jkt, nonce: c.Nonce}, nil
}

func decodePart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil || json.Unmarshal(b, v) != nil {
		return errors.New("a proof part is not base64url JSON")
	}
	return nil
}

// verifyJWS checks the signature of a compact JWS with the public key jwk (ES256 or EdDSA)
// and returns the key's RFC 7638 thumbprint.
func verifyJWS(parts []string, alg string, jwk map[string]string) (string, error) {
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", errors.New("bad signature encoding")
	}
	input := []byte(parts[0] + "." + parts[1])
	x, _ := base64.RawURLEncoding.DecodeString(jwk["x"])
	var canonical string
	switch {
	case alg == "ES256" && jwk["kty"] == "EC" && jwk["crv"] == "P-256":
		y, _ := base64.RawURLEncoding.DecodeString(jwk["y"])
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil || len(sig) != 64 {
			return "", errors.New("bad P-256 key or signature")
		}
		h := sha256.Sum256(input)
		if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return "", errors.New("the signature does not verify")
		}
		canonical = fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])
	case alg == "EdDSA" && jwk["kty"] == "OKP" && jwk["crv"] == "Ed25519":
		if len(x) != ed25519.PublicKeySize || !ed25519.Verify(x, input, sig) {
			return "", errors.New("the signature does not verify")
		}
		canonical = fmt.Sprintf(`{"crv":"Ed25519","kty":"OKP","x":"%s"}`, jwk["x"])
	default:
		return "", errors.New("unsupported alg or key")
	}
	sum := sha256.Sum256([]byte(canonical))
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// TrustWorkloadIssuer makes the token endpoint take, in the jwt-bearer grant, workload
// tokens that issuer signed with key (ES256) for this authorization server.
func (a *Server) TrustWorkloadIssuer(issuer string, key *ecdsa.PublicKey) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.workloads[issuer] = key
}

// SignJWT signs claims with key (ES256) under a header with typ (none when "").
func SignJWT(key *ecdsa.PrivateKey, typ string, claims map[string]any) string {
	h := map[string]string{"alg": "ES256"}
	if typ != "" {
		h["typ"] = typ
	}
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	sum := sha256.Sum256([]byte(input))
	r, s, _ := ecdsa.Sign(rand.Reader, key, sum[:])
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// verifyJWT checks an ES256 JWT's signature with key and returns its header's typ and its
// claims.
func verifyJWT(token string, key *ecdsa.PublicKey) (string, map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", nil, errors.New("not a JWT")
	}
	var h struct{ Typ, Alg string }
	var c map[string]any
	if decodePart(parts[0], &h) != nil || decodePart(parts[1], &c) != nil || h.Alg != "ES256" {
		return "", nil, errors.New("not an ES256 JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || len(sig) != 64 || !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", nil, errors.New("the signature does not verify")
	}
	return h.Typ, c, nil
}

// claimString is claim k of c as a string.
func claimString(c map[string]any, k string) string {
	s, _ := c[k].(string)
	return s
}

// unexpired reports whether the exp claim of c is in the future of now.
func unexpired(c map[string]any, now time.Time) bool {
	exp, ok := c["exp"].(float64)
	return ok && now.Before(time.Unix(int64(exp), 0))
}

// jwtBearer answers the jwt-bearer grant: a workload token of a trusted issuer, or an
// identity assertion grant of the identity provider for an authenticated client; a.mu is
// held.
func (a *Server) jwtBearer(w http.ResponseWriter, r *http.Request, jkt string) {
	refuse := func(desc string) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": desc})
	}
	assertion := r.PostForm.Get("assertion")
	parts := strings.Split(assertion, ".")
	var c map[string]any
	if len(parts) != 3 || decodePart(parts[1], &c) != nil {
		refuse("the assertion is not a JWT")
		return
	}
	now := time.Now()
	if a.idp != nil && claimString(c, "iss") == a.idp.srv.URL {
		typ, c, err := verifyJWT(assertion, &a.idp.key.PublicKey)
		id, secret, basic := r.BasicAuth()
		switch {
		case err != nil:
			refuse("ID-JAG: " + err.Error())
		case typ != "oauth-id-jag+jwt":
			refuse("ID-JAG: typ is not oauth-id-jag+jwt")
		case !basic || a.clients[id] == "" || a.clients[id] != secret:
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		case claimString(c, "client_id") != id:
			refuse("ID-JAG: client_id is not the authenticated client")
		case claimString(c, "aud") != a.as.URL:
			refuse("ID-JAG: aud is not this authorization server")
		case claimString(c, "resource") != a.URL():
			refuse("ID-JAG: resource is not the MCP server")
		case !unexpired(c, now):
			refuse("ID-JAG: expired")
		default:
			a.issue(w, false, jkt)
		}
		return
	}
	key := a.workloads[claimString(c, "iss")]
	if key == nil {
		refuse("the assertion's issuer is not trusted")
		return
	}
	_, c, err := verifyJWT(assertion, key)
	switch {
	case err != nil:
		refuse(err.Error())
	case claimString(c, "aud") != a.as.URL && claimString(c, "aud") != a.as.URL+"/token":
		refuse("JWT assertion audience is invalid")
	case !unexpired(c, now):
		refuse("JWT assertion is expired")
	default:
		a.issue(w, false, jkt)
	}
}

// IdP is an enterprise identity provider: OpenID Connect discovery and a token endpoint
// that exchanges its ID tokens (RFC 8693) for identity assertion grants (ID-JAG) for the
// Server's authorization server.
type IdP struct {
	a         *Server
	srv       *httptest.Server
	key       *ecdsa.PrivateKey
	clientID  string // the MCP client's ID at the identity provider
	mcpClient string // its ID at the authorization server: the ID-JAG's client_id
	exchanges int
}

// StartIdP starts the identity provider. clientID is the MCP client's registration there,
// mcpClient its registration at the authorization server (add it with AddClient).
func (a *Server) StartIdP(clientID, mcpClient string) *IdP {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	i := &IdP{a: a, key: key, clientID: clientID, mcpClient: mcpClient}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": i.srv.URL, "token_endpoint": i.srv.URL + "/token", "authorization_endpoint": i.srv.URL + "/authorize",
			"jwks_uri": i.srv.URL + "/jwks", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{tokenExchange},
		})
	})
	mux.HandleFunc("POST /token", i.token)
	i.srv = httptest.NewServer(mux)
	a.mu.Lock()
	a.idp = i
	a.mu.Unlock()
	return i
}

// Issuer is the identity provider's issuer URL.
func (i *IdP) Issuer() string { return i.srv.URL }

// IDToken is an ID token for user sub, for the MCP client, valid for ttl (expired when
// ttl < 0).
func (i *IdP) IDToken(sub string, ttl time.Duration) string {
	now := time.Now()
	return SignJWT(i.key, "JWT", map[string]any{"iss": i.srv.URL, "sub": sub, "aud": i.clientID, "iat": now.Unix(), "exp": now.Add(ttl).Unix()})
}

// Exchanges is how many token exchanges the identity provider answered with an ID-JAG.
func (i *IdP) Exchanges() int {
	i.a.mu.Lock()
	defer i.a.mu.Unlock()
	return i.exchanges
}

func (i *IdP) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	refuse := func(code, desc string) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
	}
	_, c, err := verifyJWT(f.Get("subject_token"), &i.key.PublicKey)
	switch {
	case f.Get("grant_type") != tokenExchange:
		refuse("unsupported_grant_type", "token exchange only")
	case f.Get("requested_token_type") != typeIDJAG || f.Get("subject_token_type") != typeIDToken:
		refuse("invalid_request", "want an ID token in and an ID-JAG out")
	case f.Get("client_id") != i.clientID:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
	case err != nil || claimString(c, "aud") != i.clientID || claimString(c, "iss") != i.srv.URL:
		refuse("invalid_grant", "the ID token is not valid for this client")
	case !unexpired(c, time.Now()):
		refuse("invalid_grant", "the ID token expired")
	case f.Get("audience") != i.a.as.URL || f.Get("resource") != i.a.URL():
		refuse("invalid_target", "unknown audience or resource")
	default:
		now := time.Now()
		jag := SignJWT(i.key, "oauth-id-jag+jwt", map[string]any{
			"iss": i.srv.URL, "sub": claimString(c, "sub"), "aud": f.Get("audience"), "resource": f.Get("resource"),
			"client_id": i.mcpClient, "jti": randomString(), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		})
		i.a.mu.Lock()
		i.exchanges++
		i.a.issued = append(i.a.issued, jag)
		i.a.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": typeIDJAG, "token_type": "N_A", "expires_in": 300})
	}
}
