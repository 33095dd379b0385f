package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/ttalk/mcpbridge/internal/dpop"
	"github.com/ttalk/mcpbridge/internal/grant"
	"golang.org/x/oauth2"
)

// The values of AuthConfig.DPoP.
const (
	DPoPAuto = "auto" // bind tokens when the server's metadata asks for it (the default)
	DPoPOn   = "on"   // always bind tokens; fail when the authorization server will not
	DPoPOff  = "off"  // never
)

// dpopMode is a's DPoP setting, checked.
func dpopMode(a *AuthConfig) (string, error) {
	switch strings.ToLower(a.DPoP) {
	case "", DPoPAuto:
		return DPoPAuto, nil
	case DPoPOn, "true", "required":
		return DPoPOn, nil
	case DPoPOff, "false":
		return DPoPOff, nil
	}
	return "", fmt.Errorf("auth: dpop must be %s, %s or %s, not %q", DPoPAuto, DPoPOn, DPoPOff, a.DPoP)
}

// dpopGrant is the DPoP binding of a handler's grant (RFC 9449): the grant's key, the token
// endpoint its token requests carry proofs to, and whether its tokens are bound; and, while a
// new grant is being made, the key for that one, which replaces the current one only when
// the new grant's first token arrives. Transports use it: one under the handler's own HTTP
// client (token requests) and one under each MCP connection (every request with the token).
type dpopGrant struct {
	mu       sync.Mutex // guards the fields below
	key      *dpop.Key
	tokenURL string
	bound    bool

	pending bool // a new grant is being made, with next (nil: unbound) at nextURL
	next    *dpop.Key
	nextURL string
}

// use makes key (nil: none) the current grant's, as read from the token store.
func (g *dpopGrant) use(key *dpop.Key, tokenURL string, tok *oauth2.Token) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.key, g.tokenURL, g.pending = key, tokenURL, false
	g.bound = key != nil && tok != nil && strings.EqualFold(tok.TokenType, "DPoP")
}

// begin starts a new grant with key (nil: unbound); its token requests go to tokenURL.
func (g *dpopGrant) begin(key *dpop.Key, tokenURL string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending, g.next, g.nextURL = true, key, tokenURL
}

// abandon forgets a new grant that produced no token; the current one stays.
func (g *dpopGrant) abandon() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending, g.next, g.nextURL = false, nil, ""
}

// issued records a token the grant produced (a new grant's first token makes it current): a
// token_type of DPoP means the token is bound to the grant's key (RFC 9449 section 5).
func (g *dpopGrant) issued(tok *oauth2.Token) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pending {
		g.key, g.tokenURL = g.next, g.nextURL
		g.pending, g.next, g.nextURL = false, nil, ""
	}
	g.bound = g.key != nil && strings.EqualFold(tok.TokenType, "DPoP")
}

// binding is the key of a bound grant, nil otherwise.
func (g *dpopGrant) binding() *dpop.Key {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.bound {
		return nil
	}
	return g.key
}

// tokenRequestKey names the key for a token request: the new grant's while one is being
// made, else the current grant's (a refresh).
func (g *dpopGrant) tokenRequestKey(req *http.Request) *dpop.Key {
	g.mu.Lock()
	defer g.mu.Unlock()
	key, url := g.key, g.tokenURL
	if g.pending {
		key, url = g.next, g.nextURL
	}
	if key == nil || req.Method != http.MethodPost || !dpop.SameEndpoint(req, url) {
		return nil
	}
	return key
}

// resourceKey names the key for an MCP request that carries the grant's bound token.
func (g *dpopGrant) resourceKey(req *http.Request) *dpop.Key {
	if req.Header.Get("Authorization") == "" {
		return nil
	}
	return g.binding()
}

// client is hc with token requests signed.
func (g *dpopGrant) client(hc *http.Client) *http.Client {
	c := *hc
	c.Transport = &dpop.Transport{Base: hc.Transport, Key: g.tokenRequestKey}
	return &c
}

// wrapResource puts an MCP connection's requests through a resource-side Transport.
func (g *dpopGrant) wrapResource(base http.RoundTripper) http.RoundTripper {
	return &dpop.Transport{Base: base, Key: g.resourceKey}
}

// useStored takes the key of a stored grant. It reports false when the grant has a key that
// cannot be read, so its tokens cannot be used.
func (g *dpopGrant) useStored(st *StoredToken) bool {
	if st.DPoPKey == "" {
		g.use(nil, "", nil)
		return true
	}
	key, err := dpop.ParseKey(st.DPoPKey)
	if err != nil {
		return false
	}
	g.use(key, st.TokenURL, st.Token)
	return true
}

// storedKey is the current grant's key for the token store, "" when there is none.
func (g *dpopGrant) storedKey() (string, error) {
	g.mu.Lock()
	key := g.key
	g.mu.Unlock()
	if key == nil {
		return "", nil
	}
	return key.Marshal()
}

// discovery is what the bridge learns about a server's authorization before a grant: the
// protected resource metadata, the authorization server's issuer and token endpoint, and
// the DPoP algorithms it accepts.
type discovery struct {
	challenges []oauthex.Challenge
	prm        *oauthex.ProtectedResourceMetadata
	resource   string
	issuer     string
	tokenURL   string
	dpopAlgs   []string // the authorization server's dpop_signing_alg_values_supported
}

// discover follows a 401 to the protected resource metadata and the authorization server's
// metadata.
func (h *Handler) discover(ctx context.Context, req *http.Request, resp *http.Response) (*discovery, error) {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, err := h.resourceMetadata(ctx, challenges, req.URL)
	if err != nil {
		return nil, err
	}
	d := &discovery{challenges: challenges, prm: prm, resource: req.URL.String(), issuer: prm.AuthorizationServers[0]}
	if prm.Resource != "" {
		d.resource = prm.Resource
	}
	d.tokenURL = strings.TrimSuffix(d.issuer, "/") + "/token"
	md, err := grant.Discover(ctx, h.hc, d.issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: authorization server metadata: %w", err)
	}
	if md != nil {
		d.tokenURL, d.issuer, d.dpopAlgs = md.TokenEndpoint, md.Issuer, md.DPoPAlgs
	}
	return d, nil
}

// scopes are the scopes to ask for: the configured ones, else the challenge's, else the
// resource's scopes_supported.
func (d *discovery) scopes(configured []string) []string {
	if len(configured) > 0 {
		return configured
	}
	for _, c := range d.challenges {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return d.prm.ScopesSupported
}

// bindCodeGrant decides, before go-sdk's authorization code flow runs, whether its tokens
// will be bound: from the same metadata go-sdk is about to read. A 403 that is not a scope
// challenge starts no grant (go-sdk lets the request fail), so nothing changes then.
func (h *Handler) bindCodeGrant(ctx context.Context, req *http.Request, resp *http.Response) error {
	mode, err := dpopMode(h.auth)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusForbidden {
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		scope := false
		for _, c := range cs {
			scope = scope || (c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope")
		}
		if !scope {
			return nil
		}
	}
	if mode == DPoPOff {
		h.dpop.begin(nil, "")
		return nil
	}
	d, err := h.discover(ctx, req, resp)
	if err != nil {
		if mode == DPoPOn {
			return err
		}
		h.log.Debug("reading the authorization metadata before the login failed; tokens will not be bound", "err", err)
		h.dpop.begin(nil, "")
		return nil
	}
	return h.bindGrant(d)
}

// bindGrant decides whether the next grant is bound to a key and, if so, makes the key: with
// DPoP on, always; with auto, when the authorization server lists DPoP algorithms or the
// resource requires bound tokens. Off, or auto without a request, leaves the grant unbound.
func (h *Handler) bindGrant(d *discovery) error {
	mode, err := dpopMode(h.auth)
	if err != nil {
		return err
	}
	wanted := len(d.dpopAlgs) > 0 || d.prm.DPOPBoundAccessTokensRequired
	if mode == DPoPOff || (mode == DPoPAuto && !wanted) {
		h.dpop.begin(nil, d.tokenURL)
		return nil
	}
	supported := d.dpopAlgs
	if len(supported) == 0 {
		supported = d.prm.DPOPSigningAlgValuesSupported
	}
	alg, err := dpop.Choose(h.auth.DPoPAlg, supported)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	key, err := dpop.NewKey(alg)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	h.dpop.begin(key, d.tokenURL)
	h.log.Debug("binding the grant's tokens with DPoP", "key", key)
	return nil
}

// checkBinding is called with each new grant's first token: an unbound token where DPoP is
// on is an error; where the server only advertised DPoP, a note.
func (h *Handler) checkBinding(tok *oauth2.Token) error {
	h.dpop.mu.Lock()
	asked := (h.dpop.pending && h.dpop.next != nil) || (!h.dpop.pending && h.dpop.key != nil)
	h.dpop.mu.Unlock()
	h.dpop.issued(tok)
	bound := h.dpop.binding() != nil
	if !asked || bound {
		return nil
	}
	if mode, _ := dpopMode(h.auth); mode == DPoPOn {
		return fmt.Errorf("auth: the authorization server issued a %s token, not a DPoP-bound one, and dpop is %s", tokenTypeName(tok), DPoPOn)
	}
	h.log.Info("the authorization server issued an unbound token despite the DPoP proof; using it as a bearer token", "token_type", tokenTypeName(tok))
	return nil
}

// tokenTypeName is a token's type for a message: bounded and printable.
func tokenTypeName(tok *oauth2.Token) string {
	t := tok.TokenType
	if t == "" {
		return "Bearer"
	}
	if len(t) > 16 || strings.ContainsFunc(t, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "non-DPoP"
	}
	return t
}
