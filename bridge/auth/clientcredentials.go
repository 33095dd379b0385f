package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/ttalk/mcpbridge/internal/redact"
	"golang.org/x/oauth2"
)

// MaxTokenResponse bounds a token endpoint's answer (listed in bridge/limits.go).
const MaxTokenResponse = 1 << 20

// clientAuthMethod is the token endpoint authentication of a client credentials config.
func clientAuthMethod(a *AuthConfig) (string, error) {
	m := a.TokenEndpointAuth
	if m == "" {
		m = "client_secret_basic"
		if a.PrivateKey != "" {
			m = "private_key_jwt"
		}
	}
	switch m {
	case "client_secret_basic", "client_secret_post":
		if a.ClientSecret == "" {
			return "", fmt.Errorf("auth: %s needs client_secret", m)
		}
	case "private_key_jwt":
		if a.PrivateKey == "" {
			return "", errors.New("auth: private_key_jwt needs a private key (private_key_file)")
		}
		if _, _, err := parseSigningKey(a.PrivateKey, a.SigningAlg); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("auth: unknown token_endpoint_auth %q (want client_secret_basic, client_secret_post or private_key_jwt)", m)
	}
	return m, nil
}

// resourceMetadata finds the protected resource metadata: the challenge's resource_metadata,
// then the well-known locations (path-aware first), falling back to the server's origin as
// the authorization server (2025-03-26).
func (h *Handler) resourceMetadata(ctx context.Context, challenges []oauthex.Challenge, server *url.URL) (*oauthex.ProtectedResourceMetadata, error) {
	var urls []string
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			urls = append(urls, u)
		}
	}
	wk := *server
	wk.RawQuery, wk.Fragment = "", ""
	if p := strings.TrimSuffix(server.Path, "/"); p != "" {
		wk.Path = "/.well-known/oauth-protected-resource" + p
		urls = append(urls, wk.String())
	}
	wk.Path = "/.well-known/oauth-protected-resource"
	urls = append(urls, wk.String())
	resource := server.String()
	for _, u := range urls {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, h.hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("auth: the protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin(resource)}, Resource: resource}, nil
}

// ccSource fetches client credentials tokens; oauth2.ReuseTokenSource caches them.
type ccSource struct {
	h        *Handler
	tokenURL string
	audience string // the issuer, the JWT assertion's audience
	resource string
	scopes   []string
}

func (c *ccSource) Token() (*oauth2.Token, error) { return c.fetch(context.Background()) }

func (c *ccSource) fetch(ctx context.Context) (*oauth2.Token, error) {
	a := c.h.auth
	method, err := clientAuthMethod(a)
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(c.scopes) > 0 {
		form.Set("scope", strings.Join(c.scopes, " "))
	}
	if c.resource != "" {
		form.Set("resource", c.resource)
	}
	switch method {
	case "client_secret_post":
		form.Set("client_id", a.ClientID)
		form.Set("client_secret", a.ClientSecret)
	case "private_key_jwt":
		assertion, err := clientAssertion(a, c.audience)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", a.ClientID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("auth: token endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(a.ClientID), url.QueryEscape(a.ClientSecret))
	}
	resp, err := c.h.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxTokenResponse))
	if err != nil {
		return nil, fmt.Errorf("auth: token endpoint: %w", err)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		msg := tr.Error
		if msg == "" {
			msg = "no access_token"
		}
		if tr.Description != "" {
			msg += ": " + redact.Line(tr.Description, 300)
		}
		return nil, fmt.Errorf("auth: token endpoint answered %d: %s", resp.StatusCode, msg)
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType}
	if tr.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if err := c.h.checkBinding(tok); err != nil {
		return nil, err
	}
	return tok, nil
}

// clientAssertion is a private_key_jwt assertion (RFC 7523): iss and sub the client ID, aud
// the authorization server, a minute of life and a unique jti.
func clientAssertion(a *AuthConfig, audience string) (string, error) {
	key, alg, err := parseSigningKey(a.PrivateKey, a.SigningAlg)
	if err != nil {
		return "", err
	}
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": a.ClientID, "sub": a.ClientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": base64.RawURLEncoding.EncodeToString(jti),
	})
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sig, err := sign(key, alg, []byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// parseSigningKey reads a PEM private key (PKCS#8, PKCS#1 or SEC 1) and the JWT algorithm
// for it. Errors never quote the key.
func parseSigningKey(pemText, alg string) (crypto.Signer, string, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, "", errors.New("auth: the private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", errors.New("auth: the private key cannot be parsed")
	}
	var want string
	switch k := key.(type) {
	case *rsa.PrivateKey:
		want = "RS256"
	case *ecdsa.PrivateKey:
		if k.Curve.Params().BitSize != 256 {
			return nil, "", errors.New("auth: only P-256 EC keys are supported (ES256)")
		}
		want = "ES256"
	case ed25519.PrivateKey:
		want = "EdDSA"
	default:
		return nil, "", fmt.Errorf("auth: unsupported private key type %T", key)
	}
	if alg != "" && alg != want {
		return nil, "", fmt.Errorf("auth: signing algorithm %q does not fit the key (want %s)", alg, want)
	}
	return key.(crypto.Signer), want, nil
}

func sign(key crypto.Signer, alg string, input []byte) ([]byte, error) {
	switch alg {
	case "EdDSA":
		return key.Sign(rand.Reader, input, crypto.Hash(0))
	case "RS256":
		h := sha256.Sum256(input)
		return key.Sign(rand.Reader, h[:], crypto.SHA256)
	case "ES256":
		h := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, key.(*ecdsa.PrivateKey), h[:])
		if err != nil {
			return nil, err
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out, nil
	}
	return nil, fmt.Errorf("auth: unsupported signing algorithm %q", alg)
}
