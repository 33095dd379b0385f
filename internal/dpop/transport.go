package dpop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// Limits on what a server controls.
const (
	// MaxNonce bounds a DPoP-Nonce value; longer ones are ignored.
	MaxNonce = 512
	// maxErrorBody bounds the part of a 400 body read for its error code.
	maxErrorBody = 64 << 10
	// maxOrigins bounds the servers whose nonce and clock are remembered.
	maxOrigins = 32
	// minSkew is the clock difference below which a server's Date is not believed over
	// ours (Date has one-second resolution, and servers allow some leeway); maxSkew the one
	// above which it is not believed at all.
	minSkew = 30 * time.Second
	maxSkew = 24 * time.Hour
)

// The error codes of RFC 9449 that ask the client to try again with a new proof.
const (
	ErrUseNonce     = "use_dpop_nonce"
	ErrInvalidProof = "invalid_dpop_proof"
)

// Transport adds a DPoP proof to each request Key names a key for. A request that carries
// an access token (Authorization: Bearer or DPoP) is sent with the DPoP scheme and the
// token's hash in the proof. It remembers the latest DPoP-Nonce of every server and answers
// each kind of challenge once per request by sending the request again: a use_dpop_nonce
// with a new nonce (RFC 9449 sections 8 and 9), an invalid_dpop_proof whose Date shows our
// clock is off. A challenge it cannot answer, or one of a kind already answered, ends the
// request with a *Refusal, so a server that challenges forever costs at most three requests,
// not a loop. Safe for concurrent use.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Key returns the key to prove possession of for req, or nil to send req unchanged.
	Key func(req *http.Request) *Key
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	servers map[string]*serverState // by origin
}

type serverState struct {
	nonce string
	skew  time.Duration // the server's clock minus ours, when told by a challenge
}

// RoundTrip implements http.RoundTripper. It never modifies req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	var key *Key
	if t.Key != nil {
		key = t.Key(req)
	}
	if key == nil {
		return base.RoundTrip(req)
	}
	origin := req.URL.Scheme + "://" + strings.ToLower(req.URL.Host)
	token := accessToken(req.Header.Get("Authorization"))
	send := func(body io.ReadCloser) (*http.Response, string, error) { // body: nil the first time
		nonce, now := t.state(origin)
		proof, err := key.Proof(req.Method, req.URL.String(), now, token, nonce)
		if err != nil {
			if body != nil {
				body.Close()
			}
			return nil, "", err
		}
		out := req.Clone(req.Context())
		if body != nil {
			out.Body = body
		}
		if token != "" {
			out.Header.Set("Authorization", "DPoP "+token)
		}
		out.Header.Set("DPoP", proof)
		resp, err := base.RoundTrip(out)
		if err != nil {
			return nil, nonce, err
		}
		t.observe(origin, resp.Header.Get("DPoP-Nonce"))
		return resp, nonce, nil
	}
	// Each kind of challenge is answered once: a nonce, then (or first) the clock.
	answered := map[string]bool{}
	var body io.ReadCloser
	for {
		resp, used, err := send(body)
		if err != nil {
			return nil, err
		}
		ch := challenge(resp, req.URL.Host)
		if ch == nil {
			return resp, nil
		}
		discard(resp)
		ch.Retried = answered[ch.Code]
		if ch.Retried {
			return nil, ch
		}
		answered[ch.Code] = true
		switch ch.Code {
		case ErrUseNonce:
			if nonce, _ := t.state(origin); nonce == "" || nonce == used {
				return nil, ch
			}
		case ErrInvalidProof:
			if !t.adoptClock(origin, resp.Header.Get("Date")) {
				return nil, ch
			}
		}
		if body, err = replay(req); err != nil {
			return nil, ch
		}
	}
}

// replay is a fresh copy of req's body for sending it again: nil when it has none, an error
// when it cannot be had.
func replay(req *http.Request) (io.ReadCloser, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("the request body cannot be sent again")
	}
	return req.GetBody()
}

// discard drains a little of resp's body and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// Refusal is a DPoP challenge the Transport could not answer: a use_dpop_nonce without a
// usable new nonce or after the one retry, or an invalid_dpop_proof.
type Refusal struct {
	Host        string // the server, host and port
	Code        string // ErrUseNonce or ErrInvalidProof
	Description string // the server's error_description, bounded and printable
	Retried     bool   // the same challenge was answered once already for this request
}

func (r *Refusal) Error() string {
	var s string
	switch {
	case r.Code == ErrUseNonce && r.Retried:
		s = fmt.Sprintf("dpop: %s asked for a new DPoP nonce again after the request was retried with the one it supplied; giving up (each challenge is answered once per request)", r.Host)
	case r.Code == ErrUseNonce:
		s = fmt.Sprintf("dpop: %s asked for a DPoP nonce (use_dpop_nonce) without supplying a usable one in DPoP-Nonce", r.Host)
	case r.Retried:
		s = fmt.Sprintf("dpop: %s refused the DPoP proof (invalid_dpop_proof) again after the proof's time was set by its clock", r.Host)
	default:
		s = fmt.Sprintf("dpop: %s refused the DPoP proof (invalid_dpop_proof)", r.Host)
	}
	if r.Description != "" {
		s += ": " + r.Description
	}
	return s
}

// state is the nonce to send to origin and the time to put in the proof.
func (t *Transport) state(origin string) (string, time.Time) {
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.servers[origin]
	if s == nil {
		return "", now()
	}
	return s.nonce, now().Add(s.skew)
}

// server returns origin's state, creating it; t.mu is held. Past maxOrigins an arbitrary
// other one is forgotten.
func (t *Transport) server(origin string) *serverState {
	if t.servers == nil {
		t.servers = map[string]*serverState{}
	}
	s := t.servers[origin]
	if s == nil {
		if len(t.servers) >= maxOrigins {
			for k := range t.servers {
				delete(t.servers, k)
				break
			}
		}
		s = &serverState{}
		t.servers[origin] = s
	}
	return s
}

// observe keeps a server's new nonce, sent on any response; an invalid one is ignored.
func (t *Transport) observe(origin, nonce string) {
	if !ValidNonce(nonce) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.server(origin).nonce = nonce
}

// adoptClock takes the server's Date as the time for its proofs when it differs from ours by
// more than minSkew (and less than maxSkew); it reports whether that changed anything.
func (t *Transport) adoptClock(origin, date string) bool {
	d, err := http.ParseTime(date)
	if err != nil {
		return false
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	skew := d.Sub(now()).Truncate(time.Second)
	if skew.Abs() < minSkew || skew.Abs() > maxSkew {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.server(origin)
	if (s.skew - skew).Abs() < minSkew {
		return false
	}
	s.skew = skew
	return true
}

// ValidNonce reports whether s is a nonce RFC 9449 allows (1*NQCHAR) within MaxNonce.
func ValidNonce(s string) bool {
	if s == "" || len(s) > MaxNonce {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// accessToken is the token of an Authorization header in the Bearer or DPoP scheme.
func accessToken(h string) string {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || (!strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "DPoP")) {
		return ""
	}
	return strings.TrimSpace(tok)
}

// challenge is resp's DPoP challenge, nil when it has none: a 401 whose DPoP challenge
// names use_dpop_nonce or invalid_dpop_proof (a resource server), or a 400 whose JSON error
// does (an authorization server). A 400 body is read up to maxErrorBody and put back.
func challenge(resp *http.Response, host string) *Refusal {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if err != nil {
			return nil
		}
		for _, c := range cs {
			if e := c.Params["error"]; strings.EqualFold(c.Scheme, "dpop") && (e == ErrUseNonce || e == ErrInvalidProof) {
				return &Refusal{Host: host, Code: e, Description: redact.ASCII(redact.ClipMark(c.Params["error_description"], 200, "..."), '?')}
			}
		}
	case http.StatusBadRequest:
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if resp.Body == nil || (ct != "application/json" && !strings.HasSuffix(ct, "+json")) {
			return nil
		}
		head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		if err != nil {
			return nil
		}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(head, &e) == nil && (e.Error == ErrUseNonce || e.Error == ErrInvalidProof) {
			return &Refusal{Host: host, Code: e.Error, Description: redact.ASCII(redact.ClipMark(e.Description, 200, "..."), '?')}
		}
	}
	return nil
}

// SameEndpoint reports whether req goes to endpoint: same scheme, host and path (a trailing
// slash aside), whatever the query.
func SameEndpoint(req *http.Request, endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	return strings.EqualFold(req.URL.Scheme, u.Scheme) && strings.EqualFold(req.URL.Host, u.Host) &&
		strings.TrimSuffix(req.URL.EscapedPath(), "/") == strings.TrimSuffix(u.EscapedPath(), "/")
}
