// Package grant is what package bridge needs for the assertion grants: reading a workload or
// identity token fresh from a file, an environment variable or a command; a look at a JWT's
// claims (unverified: only to explain a mismatch before sending it); and the token endpoint
// request of the RFC 7523 jwt-bearer and RFC 8693 token exchange grants, with a bounded
// response and the server's error kept apart from ours.
//
// Tokens and secrets never appear in its errors: a file or variable is named, its content is
// not, and a command's output is never quoted.
package grant

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// Grant types and token types of RFC 7523, RFC 8693 and the identity assertion grant.
const (
	JWTBearer        = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	TokenExchange    = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

// Limits on what servers, files and commands control.
const (
	MaxResponse  = 1 << 20  // a token endpoint's answer
	MaxToken     = 64 << 10 // a workload or identity token
	maxDescribed = 200      // of a server's error_description
)

// Response is a token endpoint's successful answer.
type Response struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	IssuedTokenType string `json:"issued_token_type"`
	RefreshToken    string `json:"refresh_token"`
	Scope           string `json:"scope"`
	ExpiresIn       int64  `json:"expires_in"`
}

// Expiry is when the access token expires by expires_in counted from now; zero when the
// server did not say (or said something absurd).
func (r *Response) Expiry(now time.Time) time.Time {
	if r.ExpiresIn <= 0 || r.ExpiresIn > 10*365*24*3600 {
		return time.Time{}
	}
	return now.Add(time.Duration(r.ExpiresIn) * time.Second)
}

// Error is a token endpoint's refusal (RFC 6749 section 5.2): its code and a bounded,
// printable description.
type Error struct {
	Status      int
	Code        string
	Description string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("answered %d", e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Post sends form to a token endpoint, with HTTP Basic client authentication when basicID
// is set, and returns its answer. A refusal is an *Error.
func Post(ctx context.Context, hc *http.Client, endpoint string, form url.Values, basicID, basicSecret string) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basicID != "" {
		// RFC 6749 section 2.3.1: form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("token endpoint: reading the answer: %w", err)
	}
	if len(body) > MaxResponse {
		return nil, fmt.Errorf("token endpoint: the answer is larger than %d bytes", MaxResponse)
	}
	return parse(resp.StatusCode, body)
}

// parse reads a token endpoint's answer.
func parse(status int, body []byte) (*Response, error) {
	if status != http.StatusOK {
		var e struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		return nil, &Error{Status: status, Code: Printable(e.Code, 64), Description: Printable(e.Description, maxDescribed)}
	}
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("token endpoint: the answer is not a JSON token response")
	}
	if r.AccessToken == "" {
		return nil, errors.New("token endpoint: the answer has no access_token")
	}
	return &r, nil
}

// Printable is s cut to n bytes at a rune boundary with control characters and invalid UTF-8
// replaced, for putting a server's words in an error message.
func Printable(s string, n int) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return '?'
		}
		return r
	}, redact.ClipMark(s, n, "..."))
}

// Claims are the claims of a JWT that explain why a server may refuse it. Peek reads them
// without verifying anything: the server does that.
type Claims struct {
	Issuer   string
	Subject  string
	Audience []string
	Expiry   time.Time // zero when absent
	ClientID string
	Type     string // the header's typ
}

// Peek reads a JWT's claims, unverified. It fails, without quoting the token, when the
// token is not a JWS compact serialization with a JSON payload.
func Peek(token string) (*Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > MaxToken {
		return nil, errors.New("not a JWT (three base64url parts)")
	}
	head, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	body, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err1 != nil || err2 != nil {
		return nil, errors.New("not a JWT (its parts are not base64url)")
	}
	var h struct {
		Typ string `json:"typ"`
	}
	var c struct {
		Iss      string          `json:"iss"`
		Sub      string          `json:"sub"`
		Aud      json.RawMessage `json:"aud"`
		Exp      *json.Number    `json:"exp"`
		ClientID string          `json:"client_id"`
	}
	if json.Unmarshal(head, &h) != nil || json.Unmarshal(body, &c) != nil {
		return nil, errors.New("not a JWT (its header or claims are not JSON objects)")
	}
	out := &Claims{Issuer: c.Iss, Subject: c.Sub, ClientID: c.ClientID, Type: h.Typ}
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		out.Audience = []string{one}
	} else {
		_ = json.Unmarshal(c.Aud, &out.Audience)
	}
	if c.Exp != nil {
		if f, err := c.Exp.Float64(); err == nil && f > 0 && f < 1<<40 {
			out.Expiry = time.Unix(int64(f), 0)
		}
	}
	return out, nil
}

// HasAudience reports whether any of want (compared without a trailing slash) is among aud.
func HasAudience(aud []string, want ...string) bool {
	for _, a := range aud {
		for _, w := range want {
			if w != "" && strings.TrimSuffix(a, "/") == strings.TrimSuffix(w, "/") {
				return true
			}
		}
	}
	return false
}
