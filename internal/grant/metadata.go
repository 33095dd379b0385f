package grant

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Metadata is what the assertion grants and DPoP need of an authorization server's metadata
// (RFC 8414) or an identity provider's (OpenID Connect discovery).
type Metadata struct {
	Issuer        string   `json:"issuer"`
	TokenEndpoint string   `json:"token_endpoint"`
	DPoPAlgs      []string `json:"dpop_signing_alg_values_supported"`
}

// Discover reads issuer's metadata from the well-known locations, RFC 8414 first, then
// OpenID Connect discovery (both path-aware), and returns the first that names issuer as
// its issuer. It returns nil and no error when none is published. Unlike go-sdk's
// discovery it does not require PKCE: these grants have no authorization endpoint.
func Discover(ctx context.Context, hc *http.Client, issuer string) (*Metadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not an absolute URL", Printable(issuer, 200))
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	urls := []string{origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path}
	if path != "" {
		urls = append(urls, origin+path+"/.well-known/openid-configuration")
	}
	var mismatch error
	for _, m := range urls {
		md, err := fetchMetadata(ctx, hc, m)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		if strings.TrimSuffix(md.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			mismatch = fmt.Errorf("the metadata at %s names issuer %q, not %q", m, Printable(md.Issuer, 200), Printable(issuer, 200))
			continue
		}
		if md.TokenEndpoint == "" {
			return nil, fmt.Errorf("the metadata at %s names no token endpoint", m)
		}
		if t, err := url.Parse(md.TokenEndpoint); err != nil || (t.Scheme != "https" && t.Scheme != "http") || t.Host == "" {
			return nil, fmt.Errorf("the metadata at %s names a token endpoint that is not an http(s) URL", m)
		}
		return md, nil
	}
	return nil, mismatch
}

func fetchMetadata(ctx context.Context, hc *http.Client, u string) (*Metadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("%s answered %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxResponse {
		return nil, fmt.Errorf("%s: metadata larger than %d bytes", u, MaxResponse)
	}
	var md Metadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, fmt.Errorf("%s: not JSON metadata", u)
	}
	return &md, nil
}
