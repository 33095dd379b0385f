package dpop

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// decoded is a proof taken apart and verified here, independently of Proof.
type decoded struct {
	Header struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}
	Claims struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   int64  `json:"iat"`
		ATH   string `json:"ath"`
		Nonce string `json:"nonce"`
	}
	Thumbprint string
}

func decode(t *testing.T, proof string) *decoded {
	t.Helper()
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		t.Fatalf("proof has %d parts", len(parts))
	}
	var d decoded
	for i, v := range []any{&d.Header, &d.Claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	input := []byte(parts[0] + "." + parts[1])
	x, _ := base64.RawURLEncoding.DecodeString(d.Header.JWK["x"])
	var canonical string
	switch d.Header.Alg {
	case ES256:
		y, _ := base64.RawURLEncoding.DecodeString(d.Header.JWK["y"])
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil || len(sig) != 64 {
			t.Fatalf("bad key or signature: %v", err)
		}
		h := sha256.Sum256(input)
		if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatal("ES256 signature does not verify")
		}
		canonical = `{"crv":"P-256","kty":"EC","x":"` + d.Header.JWK["x"] + `","y":"` + d.Header.JWK["y"] + `"}`
	case EdDSA:
		if !ed25519.Verify(x, input, sig) {
			t.Fatal("EdDSA signature does not verify")
		}
		canonical = `{"crv":"Ed25519","kty":"OKP","x":"` + d.Header.JWK["x"] + `"}`
	default:
		t.Fatalf("alg %q", d.Header.Alg)
	}
	sum := sha256.Sum256([]byte(canonical))
	d.Thumbprint = base64.RawURLEncoding.EncodeToString(sum[:])
	return &d
}

func TestProof(t *testing.T) {
	for _, alg := range []string{ES256, EdDSA} {
		t.Run(alg, func(t *testing.T) {
			k, err := NewKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			iat := time.Unix(1_800_000_000, 0)
			p, err := k.Proof("POST", "HTTPS://MCP.Example.com:8443/mcp/v1?token=secret#frag", iat, "access-token", "n-1")
			if err != nil {
				t.Fatal(err)
			}
			d := decode(t, p)
			sum := sha256.Sum256([]byte("access-token"))
			switch {
			case d.Header.Typ != "dpop+jwt" || d.Header.Alg != alg:
				t.Errorf("header %+v", d.Header)
			case d.Header.JWK["d"] != "":
				t.Error("the jwk holds the private key")
			case d.Claims.HTM != "POST" || d.Claims.HTU != "https://mcp.example.com:8443/mcp/v1":
				t.Errorf("htm %q htu %q", d.Claims.HTM, d.Claims.HTU)
			case d.Claims.IAT != iat.Unix() || d.Claims.Nonce != "n-1" || d.Claims.JTI == "":
				t.Errorf("claims %+v", d.Claims)
			case d.Claims.ATH != base64.RawURLEncoding.EncodeToString(sum[:]):
				t.Errorf("ath %q", d.Claims.ATH)
			case d.Thumbprint != k.Thumbprint():
				t.Errorf("thumbprint %q, key says %q", d.Thumbprint, k.Thumbprint())
			}
			p2, err := k.Proof("GET", "https://mcp.example.com/mcp", iat, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if d2 := decode(t, p2); d2.Claims.JTI == d.Claims.JTI || d2.Claims.ATH != "" || d2.Claims.Nonce != "" {
				t.Errorf("second proof claims %+v", d2.Claims)
			}
			if strings.Contains(p, "secret") || strings.Contains(p, "frag") {
				t.Error("the query or fragment reached the proof")
			}
		})
	}
	k, _ := NewKey("")
	if _, err := k.Proof("POST", "/relative", time.Now(), "", ""); err == nil {
		t.Error("a relative URL made a proof")
	}
}

// Keys survive the token store; what prints of them holds no private key.
func TestKeyMarshal(t *testing.T) {
	for _, alg := range []string{ES256, EdDSA} {
		k, err := NewKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := k.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		k2, err := ParseKey(s)
		if err != nil || k2.Thumbprint() != k.Thumbprint() || k2.Alg() != alg {
			t.Fatalf("round trip: %v, %v", k2, err)
		}
		der, _ := base64.StdEncoding.DecodeString(s)
		for _, out := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k), k.LogValue().String()} {
			if strings.Contains(out, s) || strings.Contains(out, fmt.Sprint(der)) || !strings.Contains(out, k.Thumbprint()) {
				t.Errorf("%s key prints as %q", alg, out)
			}
		}
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(p384)
	for _, bad := range []string{"", "!!", base64.StdEncoding.EncodeToString([]byte("not der")), base64.StdEncoding.EncodeToString(der)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%.20q) succeeded", bad)
		}
	}
	if _, err := NewKey("RS256"); err == nil {
		t.Error("NewKey(RS256) succeeded")
	}
}

func TestChoose(t *testing.T) {
	tests := []struct {
		want      string
		supported []string
		alg, err  string
	}{
		{"", nil, ES256, ""},
		{"", []string{"RS256", "ES256"}, ES256, ""},
		{"", []string{"EdDSA", "PS256"}, EdDSA, ""},
		{"", []string{"ES256", "EdDSA"}, ES256, ""},
		{EdDSA, []string{"ES256", "EdDSA"}, EdDSA, ""},
		{EdDSA, nil, EdDSA, ""},
		{EdDSA, []string{"ES256"}, "", "accepts ES256 for DPoP proofs, not the configured EdDSA"},
		{"", []string{"none", "RS256"}, "", "accepts only none, RS256"},
		{"", []string{"\x1b[31mred"}, "", "accepts only ?[31mred"},
		{"HS256", nil, "", `unsupported algorithm "HS256"`},
	}
	for _, tt := range tests {
		alg, err := Choose(tt.want, tt.supported)
		if alg != tt.alg || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Choose(%q, %q) = %q, %v; want %q, %q", tt.want, tt.supported, alg, err, tt.alg, tt.err)
		}
	}
}

// server is an httptest server whose handler decides per request, counting them and
// keeping what each carried.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	proofs []*decoded
	auth   []string
	bodies []string
}

func newServer(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.proofs)
		var d *decoded
		if p := r.Header.Get("DPoP"); p != "" {
			d = decode(t, p)
		}
		s.proofs = append(s.proofs, d)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		h(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.proofs)
}

func rsChallenge(w http.ResponseWriter, code, nonce string) {
	if nonce != "" {
		w.Header().Set("DPoP-Nonce", nonce)
	}
	w.Header().Set("WWW-Authenticate", `DPoP error="`+code+`", error_description="try again"`)
	w.WriteHeader(http.StatusUnauthorized)
}

func asChallenge(w http.ResponseWriter, code, nonce string) {
	if nonce != "" {
		w.Header().Set("DPoP-Nonce", nonce)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprintf(w, `{"error":%q,"error_description":"try again"}`, code)
}

func TestTransport(t *testing.T) {
	key, err := NewKey("")
	if err != nil {
		t.Fatal(err)
	}
	skewed := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	tests := []struct {
		name     string
		handler  func(n int, w http.ResponseWriter, r *http.Request)
		noReplay bool   // the request body has no GetBody
		requests int    // the server sees this many
		refusal  string // the RoundTrip error, "" for success
		check    func(t *testing.T, s *server)
	}{
		{name: "plain", requests: 1, handler: func(int, http.ResponseWriter, *http.Request) {},
			check: func(t *testing.T, s *server) {
				if s.auth[0] != "DPoP tok" || s.proofs[0] == nil || s.proofs[0].Claims.ATH == "" {
					t.Errorf("auth %q proof %+v", s.auth[0], s.proofs[0])
				}
			}},
		{name: "resource nonce", requests: 2, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 0 {
				rsChallenge(w, ErrUseNonce, "n1")
			}
		}, check: func(t *testing.T, s *server) {
			if s.proofs[1].Claims.Nonce != "n1" || s.bodies[1] != "the body" || s.proofs[0].Claims.JTI == s.proofs[1].Claims.JTI {
				t.Errorf("retry: nonce %q body %q", s.proofs[1].Claims.Nonce, s.bodies[1])
			}
		}},
		{name: "token endpoint nonce", requests: 2, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 0 {
				asChallenge(w, ErrUseNonce, "n1")
			}
		}},
		{name: "endless nonces", requests: 2, refusal: "asked for a new DPoP nonce again", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			rsChallenge(w, ErrUseNonce, fmt.Sprint("n", n))
		}},
		{name: "nonce challenge without a nonce", requests: 1, refusal: "without supplying a usable one", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			rsChallenge(w, ErrUseNonce, "")
		}},
		{name: "nonce challenge with an invalid nonce", requests: 1, refusal: "without supplying a usable one", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			asChallenge(w, ErrUseNonce, `has "quotes"`)
		}},
		{name: "nonce challenge with an oversized nonce", requests: 1, refusal: "without supplying a usable one", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			asChallenge(w, ErrUseNonce, strings.Repeat("n", MaxNonce+1))
		}},
		{name: "body cannot be replayed", noReplay: true, requests: 1, refusal: "use_dpop_nonce", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			rsChallenge(w, ErrUseNonce, "n1")
		}},
		{name: "server clock ahead", requests: 2, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 0 {
				w.Header().Set("Date", skewed(10*time.Minute))
				rsChallenge(w, ErrInvalidProof, "")
			}
		}, check: func(t *testing.T, s *server) {
			if d := s.proofs[1].Claims.IAT - s.proofs[0].Claims.IAT; d < 590 || d > 610 {
				t.Errorf("the retry's iat moved %ds, want about 600", d)
			}
		}},
		{name: "server clock absurdly ahead", requests: 1, refusal: "refused the DPoP proof (invalid_dpop_proof): try again", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", skewed(100*24*time.Hour))
			asChallenge(w, ErrInvalidProof, "")
		}},
		{name: "clock then nonce", requests: 3, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			switch n {
			case 0:
				w.Header().Set("Date", skewed(-time.Hour))
				rsChallenge(w, ErrInvalidProof, "")
			case 1:
				rsChallenge(w, ErrUseNonce, "n1")
			}
		}},
		{name: "clock twice", requests: 2, refusal: "again after the proof's time was set by its clock", handler: func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", skewed(time.Duration(n+1)*time.Hour))
			rsChallenge(w, ErrInvalidProof, "")
		}},
		{name: "other 401 goes to the caller", requests: 1, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `DPoP error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
		}},
		{name: "other 400 goes to the caller", requests: 1, handler: func(n int, w http.ResponseWriter, r *http.Request) {
			asChallenge(w, "invalid_grant", "")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			tr := &Transport{Key: func(*http.Request) *Key { return key }}
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/mcp?q=1", strings.NewReader("the body"))
			if tt.noReplay {
				req.GetBody = nil
			}
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := tr.RoundTrip(req)
			var r *Refusal
			switch {
			case tt.refusal == "" && err != nil:
				t.Fatalf("RoundTrip: %v", err)
			case tt.refusal != "" && (!errors.As(err, &r) || !strings.Contains(err.Error(), tt.refusal)):
				t.Fatalf("RoundTrip error %v, want %q", err, tt.refusal)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if n := s.requests(); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if req.Header.Get("DPoP") != "" || req.Header.Get("Authorization") != "Bearer tok" {
				t.Error("RoundTrip modified the request")
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// The latest nonce of each server is sent, from any response; requests without a key pass
// untouched.
func TestTransportNonceOnEveryResponse(t *testing.T) {
	key, _ := NewKey(EdDSA)
	s := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("DPoP-Nonce", fmt.Sprint("n", n))
	})
	signed := true
	tr := &Transport{Key: func(*http.Request) *Key {
		if signed {
			return key
		}
		return nil
	}}
	for range 3 {
		resp, err := tr.RoundTrip(httptestRequest(s.URL))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	signed = false
	resp, err := tr.RoundTrip(httptestRequest(s.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, want := range []string{"", "n0", "n1"} {
		if got := s.proofs[i].Claims.Nonce; got != want {
			t.Errorf("request %d nonce %q, want %q", i, got, want)
		}
	}
	if s.proofs[3] != nil {
		t.Error("a request without a key got a proof")
	}
}

func httptestRequest(url string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return req
}

// Whatever a server answers, working out its challenge neither panics nor loses the body.
func FuzzChallenge(f *testing.F) {
	f.Add(401, `DPoP error="use_dpop_nonce", error_description="x"`, "")
	f.Add(400, "", `{"error":"invalid_dpop_proof","error_description":"\u0007bell"}`)
	f.Add(401, `Bearer realm="a", DPoP error="invalid_dpop_proof"`, "")
	f.Add(400, "", `{"error":`)
	f.Fuzz(func(t *testing.T, status int, www, body string) {
		if status < 100 || status > 599 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		resp.Header.Set("Content-Type", "application/json")
		resp.Header.Set("WWW-Authenticate", www)
		if ch := challenge(resp, "h"); ch != nil {
			if ch.Code != ErrUseNonce && ch.Code != ErrInvalidProof {
				t.Fatalf("code %q", ch.Code)
			}
			for _, r := range ch.Error() {
				if r < 0x20 {
					t.Fatalf("control character in %q", ch.Error())
				}
			}
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != body {
			t.Fatalf("body %q, want %q", b, body)
		}
		_ = ValidNonce(www)
	})
}
