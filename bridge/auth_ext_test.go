package bridge_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// DPoP against servers that misbehave or are merely unusual: whatever they do, the bridge
// either works or fails with the reason, after a bounded number of requests. The grant is
// client credentials; the binding is the same for every grant.
func TestDPoPUntrusted(t *testing.T) {
	es256 := []string{"ES256"}
	tests := []struct {
		name   string
		opts   oauthtest.DPoPOptions
		skew   time.Duration
		dpop   string // AuthConfig.DPoP
		alg    string // AuthConfig.DPoPAlg
		fail   string // "" when the server must work
		bound  bool
		verify func(t *testing.T, st oauthtest.DPoPStats)
	}{
		{name: "bound", opts: oauthtest.DPoPOptions{Algs: es256}, bound: true},
		{name: "Ed25519 where it is the only algorithm", opts: oauthtest.DPoPOptions{Algs: []string{"EdDSA"}}, bound: true},
		{name: "Ed25519 configured", opts: oauthtest.DPoPOptions{Algs: []string{"ES256", "EdDSA"}}, alg: "EdDSA", bound: true},
		{name: "nonces required", opts: oauthtest.DPoPOptions{Algs: es256, ASNonce: oauthtest.Nonce, RSNonce: oauthtest.Nonce}, bound: true,
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.Challenges != 2 {
					t.Errorf("%d nonce challenges, want 2 (one per server)", st.Challenges)
				}
			}},
		{name: "a new nonce on every response", opts: oauthtest.DPoPOptions{Algs: es256, ASNonce: oauthtest.NonceEvery, RSNonce: oauthtest.NonceEvery}, bound: true,
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.Challenges > 2 {
					t.Errorf("%d nonce challenges: the bridge does not keep the latest nonce", st.Challenges)
				}
			}},
		{name: "endless nonce challenges at the authorization server", opts: oauthtest.DPoPOptions{Algs: es256, ASNonce: oauthtest.NonceEndless},
			fail: "asked for a new DPoP nonce again after the request was retried",
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				// server/discover and then initialize each authorize once: two token requests each.
				if st.Challenges == 0 || st.Challenges > 4 {
					t.Errorf("%d nonce challenges, want at most 4", st.Challenges)
				}
			}},
		{name: "endless nonce challenges at the MCP server", opts: oauthtest.DPoPOptions{Algs: es256, RSNonce: oauthtest.NonceEndless},
			fail: "asked for a new DPoP nonce again after the request was retried",
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.Challenges == 0 || st.Challenges > 4 {
					t.Errorf("%d nonce challenges, want at most 4", st.Challenges)
				}
			}},
		{name: "server clock ten minutes ahead", opts: oauthtest.DPoPOptions{Algs: es256}, skew: 10 * time.Minute, bound: true,
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.Refused == 0 || st.Refused > 2 {
					t.Errorf("%d refused proofs, want 1 or 2 (once per server, then by its clock)", st.Refused)
				}
			}},
		{name: "server clock ten minutes behind, with nonces", opts: oauthtest.DPoPOptions{Algs: es256, ASNonce: oauthtest.Nonce, RSNonce: oauthtest.Nonce}, skew: -10 * time.Minute, bound: true},
		{name: "server clock two days ahead", opts: oauthtest.DPoPOptions{Algs: es256}, skew: 48 * time.Hour,
			fail: "refused the DPoP proof (invalid_dpop_proof): iat is outside the window"},
		{name: "unbound token where DPoP is advertised", opts: oauthtest.DPoPOptions{Algs: es256, Unbound: true},
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.TokenProofs == 0 || st.BearerRequests == 0 {
					t.Errorf("stats %+v: want a proof at the token endpoint, then Bearer", st)
				}
			}},
		{name: "unbound token with dpop on", opts: oauthtest.DPoPOptions{Algs: es256, Unbound: true}, dpop: bridge.DPoPOn,
			fail: "issued a Bearer token, not a DPoP-bound one, and dpop is on"},
		{name: "dpop on, server without DPoP", dpop: bridge.DPoPOn, fail: "issued a Bearer token, not a DPoP-bound one"},
		{name: "dpop off", opts: oauthtest.DPoPOptions{Algs: es256}, dpop: bridge.DPoPOff,
			verify: func(t *testing.T, st oauthtest.DPoPStats) {
				if st.TokenProofs != 0 || st.BearerRequests == 0 {
					t.Errorf("stats %+v: want no proof, Bearer", st)
				}
			}},
		{name: "configured algorithm not accepted", opts: oauthtest.DPoPOptions{Algs: es256}, alg: "EdDSA",
			fail: "the server accepts ES256 for DPoP proofs, not the configured EdDSA"},
		{name: "only algorithms the bridge lacks", opts: oauthtest.DPoPOptions{Algs: []string{"RS256", "none"}},
			fail: "accepts only RS256, none for DPoP proofs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t)
			as.AddClient("svc", "cc-SECRET-1")
			as.SetDPoP(tt.opts)
			as.SetClockSkew(tt.skew)
			var log debugLog
			opts := oauthOpts(nil, nil)
			opts.Logger = log.logger()
			cfg := bridge.ServerConfig{ID: "billing", URL: as.URL(), Auth: &bridge.AuthConfig{
				Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "cc-SECRET-1", DPoP: tt.dpop, DPoPAlg: tt.alg}}
			set, err := connectSet(t, []bridge.ServerConfig{cfg}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.fail != "" {
				if f := set.Failed(); len(f) != 1 || !strings.Contains(f[0].Error(), tt.fail) {
					t.Fatalf("failed = %v, want %q", f, tt.fail)
				}
			} else {
				if f := set.Failed(); len(f) > 0 {
					t.Fatalf("failed: %v", f)
				}
				for range 3 {
					if _, err := byName(t, set.Tools(), "echo").Handler(ctxT(t, 10*time.Second), []byte(`{"z":"x"}`)); err != nil {
						t.Fatal(err)
					}
				}
				st := set.Servers()[0].Status().Auth
				if got := st != nil && st.Binding == "dpop"; got != tt.bound {
					t.Errorf("status auth = %+v, want bound %v", st, tt.bound)
				}
				if tt.bound && as.DPoP().ResourceProofs < 3 {
					t.Errorf("%d proofs at the MCP server for 3 calls", as.DPoP().ResourceProofs)
				}
			}
			if tt.verify != nil {
				tt.verify(t, as.DPoP())
			}
			if len(as.Issued()) > 0 {
				checkNoTokens(t, as, log.String())
			}
			if strings.Contains(log.String(), "cc-SECRET-1") {
				t.Error("the client secret reached the log")
			}
		})
	}
}

// A DPoP-bound grant from a login keeps its key in the token store; a stored key that cannot
// be read makes the token unusable, and the server needs a login again.
func TestDPoPStoredKey(t *testing.T) {
	as := newAuthServer(t)
	as.SetDPoP(oauthtest.DPoPOptions{Algs: []string{"ES256"}})
	path := filepath.Join(t.TempDir(), "tokens.json")
	store := &bridge.FileTokenStore{Path: path}
	cfg := bridge.ServerConfig{ID: "tracker", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(store, browserAuthorizer()))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("login: %v %v", err, set.Failed())
	}
	set.Close()

	set, err = connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(store, nil))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("headless with the stored key: %v %v", err, set.Failed())
	}
	if st := set.Servers()[0].Status().Auth; st == nil || st.Binding != "dpop" || st.GrantType != "authorization_code" {
		t.Errorf("status auth = %+v", st)
	}
	set.Close()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, v := range m {
		v["dpop_key"] = "bm90IGEga2V5" // "not a key"
	}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	set, err = connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) != 1 || !strings.Contains(f[0].Error(), "needs login") {
		t.Fatalf("failed = %v, want needs login", f)
	}
}

// Workload identity and enterprise-managed authorization when the token cannot be had or is
// not right: each fails with what is wrong, names the source, and never quotes the token.
func TestAssertionGrantFailures(t *testing.T) {
	as := newAuthServer(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	as.TrustWorkloadIssuer("https://ci.example", &key.PublicKey)
	dir := t.TempDir()
	valid := oauthtest.SignJWT(key, "JWT", map[string]any{"iss": "https://ci.example", "aud": as.Issuer(), "exp": time.Now().Add(time.Hour).Unix()})
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("EMPTY_TOKEN", "")
	tests := []struct {
		name string
		auth bridge.AuthConfig
		want string
	}{
		{"missing file", bridge.AuthConfig{TokenFile: filepath.Join(dir, "nope")}, "the workload token file " + filepath.Join(dir, "nope") + " does not exist"},
		{"directory", bridge.AuthConfig{TokenFile: dir}, "reading the workload token file " + dir},
		{"empty file", bridge.AuthConfig{TokenFile: file("empty", "\n")}, "the workload token from file " + filepath.Join(dir, "empty") + " is empty"},
		{"not a JWT", bridge.AuthConfig{TokenFile: file("garbage", "hello-world")}, "the workload token is not a JWT"},
		{"two tokens", bridge.AuthConfig{TokenFile: file("two", valid+"\n"+valid)}, "is not one token"},
		{"unset variable", bridge.AuthConfig{TokenEnv: "MCPBRIDGE_SURELY_UNSET_VAR"}, "the environment variable MCPBRIDGE_SURELY_UNSET_VAR, which should hold the workload token, is not set or empty"},
		{"empty variable", bridge.AuthConfig{TokenEnv: "EMPTY_TOKEN"}, "EMPTY_TOKEN, which should hold the workload token, is not set or empty"},
		{"failing command", bridge.AuthConfig{TokenCommand: []string{self, "-test.run=^$", "-no-such-flag"}}, "the workload token command " + self + " failed"},
		{"missing command", bridge.AuthConfig{TokenCommand: []string{filepath.Join(dir, "no-such-program")}}, "the workload token command"},
		{"untrusted issuer", bridge.AuthConfig{TokenFile: file("other", oauthtest.SignJWT(key, "", map[string]any{"iss": "https://other.example", "aud": as.Issuer(), "exp": time.Now().Add(time.Hour).Unix()}))},
			"the authorization server refused the workload token: answered 400 invalid_grant: the assertion's issuer is not trusted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.auth
			a.Type = bridge.AuthWorkloadIdentity
			var log debugLog
			opts := oauthOpts(nil, nil)
			opts.Logger = log.logger()
			set, err := connectSet(t, []bridge.ServerConfig{{ID: "w", URL: as.URL(), Auth: &a}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			f := set.Failed()
			if len(f) != 1 || !strings.Contains(f[0].Error(), tt.want) {
				t.Fatalf("failed = %v, want %q", f, tt.want)
			}
			if strings.Contains(f[0].Error(), valid) || strings.Contains(log.String(), valid) {
				t.Error("the token reached the error or the log")
			}
		})
	}

	t.Run("config", func(t *testing.T) {
		for _, tt := range []struct {
			auth bridge.AuthConfig
			want string
		}{
			{bridge.AuthConfig{Type: bridge.AuthWorkloadIdentity}, "the workload token needs a source: token_file, token_env or token_command"},
			{bridge.AuthConfig{Type: bridge.AuthWorkloadIdentity, TokenFile: "a", TokenEnv: "B"}, "more than one source"},
			{bridge.AuthConfig{Type: bridge.AuthEnterprise, TokenFile: "a", ClientID: "c", IdPClientID: "i"}, "enterprise needs the identity provider"},
			{bridge.AuthConfig{Type: bridge.AuthEnterprise, TokenFile: "a", ClientID: "c", IdPIssuer: "https://idp"}, "needs idp_client_id"},
			{bridge.AuthConfig{Type: bridge.AuthEnterprise, TokenFile: "a", IdPIssuer: "https://idp", IdPClientID: "i"}, "needs client_id"},
			{bridge.AuthConfig{Type: bridge.AuthWorkloadIdentity, TokenFile: "a", DPoP: "sometimes"}, `dpop must be auto, on or off, not "sometimes"`},
		} {
			a := tt.auth
			_, err := bridge.Dial(ctxT(t, 10*time.Second), bridge.ServerConfig{ID: "x", URL: as.URL(), Auth: &a}, oauthOpts(nil, nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%+v: err = %v, want %q", tt.auth.String(), err, tt.want)
			}
		}
	})
}

// The workload token is read again for every grant: when the platform rotates its signing
// key and the token, the next grant (after the access token stops working) sends the new one.
func TestWorkloadTokenReadFresh(t *testing.T) {
	as := newAuthServer(t)
	sign := func() (*ecdsa.PrivateKey, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		as.TrustWorkloadIssuer("https://k8s.example", &key.PublicKey)
		return key, oauthtest.SignJWT(key, "", map[string]any{"iss": "https://k8s.example", "aud": as.Issuer(), "exp": time.Now().Add(time.Hour).Unix()})
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	_, tok := sign()
	if err := os.WriteFile(tokenFile, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := bridge.ServerConfig{ID: "w", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthWorkloadIdentity, TokenFile: tokenFile}}
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(nil, nil))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("%v %v", err, set.Failed())
	}
	_, tok = sign() // the old token no longer verifies
	if err := os.WriteFile(tokenFile, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	as.ExpireAll()
	if _, err := byName(t, set.Tools(), "echo").Handler(ctxT(t, 10*time.Second), []byte(`{"z":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if n := as.Count("urn:ietf:params:oauth:grant-type:jwt-bearer"); n != 2 {
		t.Errorf("%d jwt-bearer grants, want 2", n)
	}
}
