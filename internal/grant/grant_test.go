package grant

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func jwt(header, claims string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
}

func TestPeek(t *testing.T) {
	tests := []struct {
		name, token string
		aud         []string
		exp         int64
		typ, err    string
	}{
		{"string aud", jwt(`{"typ":"JWT"}`, `{"aud":"https://as","exp":1800000000,"iss":"i"}`), []string{"https://as"}, 1800000000, "JWT", ""},
		{"list aud", jwt(`{"typ":"oauth-id-jag+jwt"}`, `{"aud":["a","b"],"exp":1.8e9}`), []string{"a", "b"}, 1800000000, "oauth-id-jag+jwt", ""},
		{"no aud, absurd exp", jwt(`{}`, `{"exp":1e300}`), nil, 0, "", ""},
		{"two parts", "a.b", nil, 0, "", "three base64url parts"},
		{"bad base64", "a!.b.c", nil, 0, "", "not base64url"},
		{"not JSON", jwt(`{}`, `[1,2]`), nil, 0, "", "not JSON objects"},
		{"huge", jwt(`{}`, `{"x":"`+strings.Repeat("a", MaxToken)+`"}`), nil, 0, "", "three base64url parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Peek(tt.token)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), tt.token) {
					t.Fatalf("err = %v, want %q without the token", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var exp int64
			if !c.Expiry.IsZero() {
				exp = c.Expiry.Unix()
			}
			if strings.Join(c.Audience, ",") != strings.Join(tt.aud, ",") || exp != tt.exp || c.Type != tt.typ {
				t.Errorf("claims %+v", c)
			}
		})
	}
	if !HasAudience([]string{"https://as/"}, "", "https://as") || HasAudience([]string{"https://as"}, "https://other") || HasAudience(nil, "x") {
		t.Error("HasAudience")
	}
}

func TestPost(t *testing.T) {
	var got url.Values
	var user, pass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r.PostForm
		user, pass, _ = r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"access_token":"at","token_type":"DPoP","expires_in":60,"issued_token_type":"x"}`))
		case "/refuse":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"no\u001b[31m way ` + strings.Repeat("é", 300) + `"}`))
		case "/empty":
			_, _ = w.Write([]byte(`{"token_type":"Bearer"}`))
		case "/html":
			_, _ = w.Write([]byte(`<html>`))
		case "/huge":
			_, _ = w.Write([]byte(`{"access_token":"` + strings.Repeat("a", MaxResponse) + `"}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	r, err := Post(ctx, srv.Client(), srv.URL+"/ok", url.Values{"grant_type": {JWTBearer}}, "id:x", "p&w")
	if err != nil || r.AccessToken != "at" || r.TokenType != "DPoP" || r.Expiry(time.Unix(0, 0)) != time.Unix(60, 0) {
		t.Fatalf("%+v %v", r, err)
	}
	if got.Get("grant_type") != JWTBearer || user != "id%3Ax" || pass != "p%26w" {
		t.Errorf("form %v, basic %q %q", got, user, pass)
	}
	_, err = Post(ctx, srv.Client(), srv.URL+"/refuse", url.Values{}, "", "")
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != "invalid_grant" || ge.Status != 400 || len(ge.Description) > 210 || strings.ContainsRune(ge.Description, 0x1b) || !utf8.ValidString(ge.Description) {
		t.Errorf("refusal %#v", err)
	}
	for _, p := range []string{"/empty", "/html", "/huge"} {
		if _, err := Post(ctx, srv.Client(), srv.URL+p, url.Values{}, "", ""); err == nil || errors.As(err, &ge) {
			t.Errorf("%s: err = %v", p, err)
		}
	}
	if (&Response{ExpiresIn: -1}).Expiry(time.Now()) != (time.Time{}) || (&Response{ExpiresIn: 1 << 40}).Expiry(time.Now()) != (time.Time{}) {
		t.Error("absurd expires_in gave an expiry")
	}
}

func TestDiscover(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := func(m map[string]any) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(m)
		}
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server/tenant":
			write(map[string]any{"issuer": srv.URL + "/tenant", "token_endpoint": srv.URL + "/tenant/token", "dpop_signing_alg_values_supported": []string{"ES256"}})
		case "/.well-known/openid-configuration":
			write(map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token"})
		case "/.well-known/oauth-authorization-server/liar":
			write(map[string]any{"issuer": "https://evil.example", "token_endpoint": "https://evil.example/token"})
		case "/.well-known/oauth-authorization-server/js":
			write(map[string]any{"issuer": srv.URL + "/js", "token_endpoint": "javascript:alert(1)"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	md, err := Discover(ctx, srv.Client(), srv.URL+"/tenant")
	if err != nil || md.TokenEndpoint != srv.URL+"/tenant/token" || len(md.DPoPAlgs) != 1 {
		t.Errorf("RFC 8414 path-aware: %+v %v", md, err)
	}
	md, err = Discover(ctx, srv.Client(), srv.URL+"/")
	if err != nil || md.TokenEndpoint != srv.URL+"/token" {
		t.Errorf("OpenID Connect: %+v %v", md, err)
	}
	if md, err := Discover(ctx, srv.Client(), srv.URL+"/none"); md != nil || err != nil {
		t.Errorf("nothing published: %+v %v", md, err)
	}
	if _, err := Discover(ctx, srv.Client(), srv.URL+"/liar"); err == nil || !strings.Contains(err.Error(), `names issuer "https://evil.example"`) {
		t.Errorf("issuer mismatch: %v", err)
	}
	if _, err := Discover(ctx, srv.Client(), srv.URL+"/js"); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad token endpoint: %v", err)
	}
	if _, err := Discover(ctx, srv.Client(), "relative"); err == nil {
		t.Error("a relative issuer was accepted")
	}
}

func TestSourceRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	if err := os.WriteFile(file, []byte("  a.b.c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GRANT_TEST_TOKEN", "e.n.v")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("a", MaxToken+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		src       Source
		tok, fail string
	}{
		{Source{File: file}, "a.b.c", ""},
		{Source{Env: "GRANT_TEST_TOKEN"}, "e.n.v", ""},
		{Source{File: big, What: "ID token"}, "", "the ID token file " + big + " is larger than"},
		{Source{}, "", "needs a source"},
		{Source{File: file, Command: []string{"x"}}, "", "more than one source"},
	}
	for _, tt := range tests {
		tok, err := tt.src.Read(context.Background(), nil)
		if tok != tt.tok || (err == nil) != (tt.fail == "") || (err != nil && !strings.Contains(err.Error(), tt.fail)) {
			t.Errorf("%+v: %q, %v; want %q, %q", tt.src, tok, err, tt.tok, tt.fail)
		}
	}
}

// Whatever a token holds, Peek neither panics nor quotes it.
func FuzzPeek(f *testing.F) {
	f.Add(jwt(`{"typ":"JWT"}`, `{"aud":["a"],"exp":1}`))
	f.Add("a.b.c")
	f.Add("..")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := Peek(token)
		if err != nil {
			if len(token) > 8 && strings.Contains(err.Error(), token) {
				t.Fatalf("the error quotes the token: %v", err)
			}
			return
		}
		_ = HasAudience(c.Audience, "x")
	})
}
