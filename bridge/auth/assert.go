package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ttalk/mcpbridge/internal/grant"
	"golang.org/x/oauth2"
)

// grantType names the grant a Type uses at the MCP server's authorization server, for probe.
func grantType(typ string) string {
	switch typ {
	case AuthOAuth:
		return "authorization_code"
	case AuthClientCredentials:
		return "client_credentials"
	case AuthWorkloadIdentity, AuthEnterprise:
		return "jwt-bearer"
	}
	return ""
}

// tokenGrant is a grant that needs no person: it fetches a token when asked.
type tokenGrant interface {
	oauth2.TokenSource
	fetch(ctx context.Context) (*oauth2.Token, error)
}

// machineGrant runs a grant that needs no person after a 401: discovery (protected resource
// metadata, then the authorization server's), the DPoP decision, the first token. The token
// source it returns runs the grant again when the token expires.
func (h *Handler) machineGrant(ctx context.Context, req *http.Request, resp *http.Response) (oauth2.TokenSource, error) {
	d, err := h.discover(ctx, req, resp)
	if err != nil {
		return nil, err
	}
	if err := h.bindGrant(d); err != nil {
		return nil, err
	}
	defer h.dpop.abandon() // a no-op once the first token arrived
	scopes := d.scopes(h.auth.Scopes)
	var g tokenGrant = &assertionGrant{h: h, d: d, scopes: scopes}
	if h.auth.Type == AuthClientCredentials {
		g = &ccSource{h: h, tokenURL: d.tokenURL, audience: d.issuer, resource: d.resource, scopes: scopes}
	}
	tok, err := g.fetch(ctx)
	if err != nil {
		return nil, err
	}
	return oauth2.ReuseTokenSource(tok, g), nil
}

// tokenSource is where a's workload token (AuthWorkloadIdentity) or ID token
// (AuthEnterprise) is read from.
func tokenSource(a *AuthConfig) grant.Source {
	what := "workload token"
	if a.Type == AuthEnterprise {
		what = "ID token"
	}
	return grant.Source{File: a.TokenFile, Env: a.TokenEnv, Command: a.TokenCommand, What: what}
}

// checkAssertionConfig reports what an assertion grant's configuration lacks.
func checkAssertionConfig(a *AuthConfig) error {
	if err := tokenSource(a).Check(); err != nil {
		return fmt.Errorf("auth: %s: %w", a.Type, err)
	}
	if a.Type == AuthEnterprise {
		switch {
		case a.IdPIssuer == "" && a.IdPTokenEndpoint == "":
			return errors.New("auth: enterprise needs the identity provider: idp_issuer (or idp_token_endpoint)")
		case a.IdPClientID == "":
			return errors.New("auth: enterprise needs idp_client_id, this client's ID at the identity provider")
		case a.ClientID == "":
			return errors.New("auth: enterprise needs client_id, this client's ID at the MCP server's authorization server")
		}
	}
	if a.TokenEndpointAuth == "private_key_jwt" && a.PrivateKey == "" {
		return errors.New("auth: private_key_jwt needs a private key (private_key_file)")
	}
	if a.PrivateKey != "" {
		if _, _, err := parseSigningKey(a.PrivateKey, a.SigningAlg); err != nil {
			return err
		}
	}
	return nil
}

// assertionGrant obtains tokens with the jwt-bearer grant (RFC 7523): the assertion is a
// workload token read fresh (workload identity federation) or an identity assertion grant
// (ID-JAG) the enterprise identity provider issues for the user's ID token (RFC 8693 token
// exchange). Each token it fetches runs the whole chain again; oauth2.ReuseTokenSource
// keeps a token until it expires. A refusal is not retried with another grant.
type assertionGrant struct {
	h      *Handler
	d      *discovery
	scopes []string
}

func (g *assertionGrant) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*grant.CommandTimeout)
	defer cancel()
	return g.fetch(ctx)
}

func (g *assertionGrant) fetch(ctx context.Context) (*oauth2.Token, error) {
	a := g.h.auth
	subject, err := tokenSource(a).Read(ctx, []string{"MCPBRIDGE_AUDIENCE=" + g.audiences()[0], "MCPBRIDGE_RESOURCE=" + g.d.resource})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if err := g.h.refusals.check(subject); err != nil {
		return nil, err
	}
	assertion, what := subject, "workload token"
	if a.Type == AuthEnterprise {
		assertion, err = g.identityGrant(ctx, subject)
		what = "identity assertion grant (ID-JAG)"
	} else {
		err = g.checkWorkloadToken(subject)
	}
	if err != nil {
		return nil, g.h.refusals.note(subject, err)
	}
	form := url.Values{"grant_type": {grant.JWTBearer}, "assertion": {assertion}}
	if len(g.scopes) > 0 {
		form.Set("scope", strings.Join(g.scopes, " "))
	}
	if g.d.resource != "" {
		form.Set("resource", g.d.resource)
	}
	basicID, basicSecret, err := g.clientAuth(form)
	if err != nil {
		return nil, err
	}
	r, err := grant.Post(ctx, g.h.hc, g.d.tokenURL, form, basicID, basicSecret)
	if err != nil {
		return nil, g.h.refusals.note(subject, g.refused(err, what, assertion))
	}
	tok := &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, Expiry: r.Expiry(time.Now())}
	if err := g.h.checkBinding(tok); err != nil {
		return nil, err
	}
	return tok, nil
}

// clientAuth authenticates the client at the MCP server's authorization server: a private
// key (private_key_jwt), a secret (client_secret_basic, or _post when configured), or none
// (a public client: client_id in the form when one is configured). It returns the Basic
// credentials to send, if any.
func (g *assertionGrant) clientAuth(form url.Values) (string, string, error) {
	a := g.h.auth
	switch {
	case a.PrivateKey != "":
		assertion, err := clientAssertion(a, g.d.issuer)
		if err != nil {
			return "", "", err
		}
		form.Set("client_id", a.ClientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	case a.ClientSecret != "" && a.TokenEndpointAuth == "client_secret_post":
		form.Set("client_id", a.ClientID)
		form.Set("client_secret", a.ClientSecret)
	case a.ClientSecret != "":
		return a.ClientID, a.ClientSecret, nil
	case a.ClientID != "":
		form.Set("client_id", a.ClientID)
	}
	return "", "", nil
}

// audiences are the audiences a workload token may name for this authorization server: the
// configured one, else the issuer or the token endpoint (RFC 7523 section 3).
func (g *assertionGrant) audiences() []string {
	if a := g.h.auth.Audience; a != "" {
		return []string{a}
	}
	return []string{g.d.issuer, g.d.tokenURL}
}

// checkWorkloadToken checks, before the workload token leaves, that it was issued for this
// authorization server: a token for another audience is not sent (the server could replay
// it there).
func (g *assertionGrant) checkWorkloadToken(tok string) error {
	c, err := grant.Peek(tok)
	if err != nil {
		return fmt.Errorf("auth: the workload token is %w", err)
	}
	if len(c.Audience) > 0 && !grant.HasAudience(c.Audience, g.audiences()...) {
		return fmt.Errorf("auth: the workload token is for audience %s, not this authorization server (%s); not sending it: have the platform issue it for %s, or set sdkauth.audience if the server accepts another",
			quoteList(c.Audience), grant.Printable(g.d.issuer, 200), grant.Printable(g.audiences()[0], 200))
	}
	return nil
}

// identityGrant exchanges the user's ID token at the identity provider for an ID-JAG for
// this authorization server and resource (RFC 8693; enterprise-managed authorization).
func (g *assertionGrant) identityGrant(ctx context.Context, idToken string) (string, error) {
	a := g.h.auth
	endpoint := a.IdPTokenEndpoint
	if endpoint == "" {
		m, err := grant.Discover(ctx, g.h.hc, a.IdPIssuer)
		switch {
		case err != nil:
			return "", fmt.Errorf("auth: the identity provider's metadata: %w", err)
		case m == nil:
			return "", fmt.Errorf("auth: the identity provider %s publishes no metadata; set idp_token_endpoint", grant.Printable(a.IdPIssuer, 200))
		}
		endpoint = m.TokenEndpoint
	}
	form := url.Values{
		"grant_type":           {grant.TokenExchange},
		"requested_token_type": {grant.TokenTypeIDJAG},
		"audience":             {g.d.issuer},
		"resource":             {g.d.resource},
		"subject_token":        {idToken},
		"subject_token_type":   {grant.TokenTypeIDToken},
		"client_id":            {a.IdPClientID},
	}
	if len(g.scopes) > 0 {
		form.Set("scope", strings.Join(g.scopes, " "))
	}
	if a.IdPClientSecret != "" {
		form.Set("client_secret", a.IdPClientSecret)
	}
	r, err := grant.Post(ctx, g.h.hc, endpoint, form, "", "")
	if err != nil {
		var ge *grant.Error
		if errors.As(err, &ge) {
			why := ""
			if c, perr := grant.Peek(idToken); perr == nil && !c.Expiry.IsZero() && c.Expiry.Before(time.Now()) {
				why = fmt.Sprintf(" (the ID token expired at %s by this machine's clock: sign in at the identity provider again)", c.Expiry.UTC().Format(time.RFC3339))
			}
			return "", fmt.Errorf("auth: the identity provider refused to exchange the ID token for an identity assertion grant: %w%s", ge, why)
		}
		return "", fmt.Errorf("auth: the identity provider's %w", err)
	}
	if r.IssuedTokenType != "" && r.IssuedTokenType != grant.TokenTypeIDJAG {
		return "", fmt.Errorf("auth: the identity provider issued a %s, not an identity assertion grant (%s)", grant.Printable(r.IssuedTokenType, 80), grant.TokenTypeIDJAG)
	}
	return r.AccessToken, nil
}

// refused explains a token endpoint's refusal of an assertion, with what the assertion
// says about itself (audience, expiry) but never the assertion.
func (g *assertionGrant) refused(err error, what, assertion string) error {
	var ge *grant.Error
	if !errors.As(err, &ge) {
		return fmt.Errorf("auth: the authorization server's %w", err)
	}
	var hints []string
	if c, perr := grant.Peek(assertion); perr == nil {
		if len(c.Audience) > 0 {
			hints = append(hints, "its audience is "+quoteList(c.Audience))
		}
		if !c.Expiry.IsZero() && c.Expiry.Before(time.Now()) {
			hints = append(hints, fmt.Sprintf("it expired at %s by this machine's clock", c.Expiry.UTC().Format(time.RFC3339)))
		}
	}
	hint := ""
	if len(hints) > 0 {
		hint = " (" + strings.Join(hints, "; ") + ")"
	}
	return fmt.Errorf("auth: the authorization server refused the %s: %w%s; not retrying", what, ge, hint)
}

// refusals remembers the last token a grant was refused for (by the authorization server,
// the identity provider, or the bridge's own checks), so that the same token is not sent
// again: go-sdk authorizes again for the initialize that follows a refused server/discover,
// and reconnects authorize again too. A new token (the platform renewed it, the user signed
// in again) is sent.
type refusals struct {
	mu  sync.Mutex
	sum [sha256.Size]byte
	err error
}

// check returns the remembered refusal of token, nil when it has none.
func (r *refusals) check(token string) error {
	sum := sha256.Sum256([]byte(token))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil || sum != r.sum {
		return nil
	}
	return fmt.Errorf("%w (the same token again: not sending it)", r.err)
}

// note remembers err as the refusal of token when a server refused it (rather than not being
// reached), and returns err.
func (r *refusals) note(token string, err error) error {
	var ge *grant.Error
	if errors.As(err, &ge) {
		r.mu.Lock()
		r.sum, r.err = sha256.Sum256([]byte(token)), err
		r.mu.Unlock()
	}
	return err
}

// quoteList is a bounded, printable list of a token's audiences.
func quoteList(aud []string) string {
	var out []string
	for i, a := range aud {
		if i == 4 {
			out = append(out, "...")
			break
		}
		out = append(out, fmt.Sprintf("%q", grant.Printable(a, 120)))
	}
	return strings.Join(out, ", ")
}
