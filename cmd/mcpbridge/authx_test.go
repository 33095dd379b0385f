package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// tokenEnv holds the token the "printtoken" test server kind prints (a token_command).
const tokenEnv = "MCPBRIDGE_CLI_TEST_TOKEN"

// secretsNeverPrinted fails t when any output holds any secret.
func secretsNeverPrinted(t *testing.T, outputs *[]string, secrets func() []string) {
	t.Cleanup(func() {
		for _, out := range *outputs {
			for _, s := range secrets() {
				if s != "" && strings.Contains(out, s) {
					t.Errorf("secret %.12q... printed:\n%s", s, out)
				}
			}
		}
	})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// DPoP through the CLI: login binds the grant to a new key (the authorization server
// advertises DPoP and wants nonces, as does the MCP server), the key is kept in the 0600
// token file and never printed, probe and call in later runs prove possession of the same
// key, and the refresh after the access token expires is bound to it too.
func TestDPoPLoginProbeCall(t *testing.T) {
	tokens := userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	as.SetDPoP(oauthtest.DPoPOptions{Algs: []string{"ES256", "EdDSA"}, ASNonce: oauthtest.Nonce, RSNonce: oauthtest.Nonce})
	file := filepath.Join(t.TempDir(), "servers.yaml")
	writeFile(t, file, "servers:\n  tracker:\n    url: "+as.URL()+"\n    auth: {type: oauth}\n")
	var outputs []string
	secretsNeverPrinted(t, &outputs, func() []string { return append(as.Issued(), storedDPoPKeys(t, tokens)...) })

	b := &browser{t: t}
	stdout, code := runWith(t, b, "login", file, "--no-browser", "--wait", "1m")
	b.wg.Wait()
	outputs = append(outputs, stdout, b.String())
	if code != 0 || !strings.Contains(stdout, "tracker: logged in; oauth: DPoP-bound token valid until ") || !strings.Contains(stdout, "(authorization_code grant)") {
		t.Fatalf("login: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, b.String())
	}
	if keys := storedDPoPKeys(t, tokens); len(keys) != 1 {
		t.Fatalf("the token file holds %d DPoP keys, want 1", len(keys))
	}
	if fi, err := os.Stat(tokens); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}

	stdout, stderr, code := runCLI(t, "probe", file, "--json")
	outputs = append(outputs, stdout, stderr)
	var rep struct {
		Servers []struct {
			Auth *struct{ Type, GrantType, Binding string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || len(rep.Servers) != 1 || rep.Servers[0].Auth == nil {
		t.Fatalf("probe --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if a := rep.Servers[0].Auth; a.Type != "oauth" || a.GrantType != "authorization_code" || a.Binding != "dpop" {
		t.Errorf("probe --json auth = %+v", a)
	}

	stdout, stderr, code = runCLI(t, "call", file, "echo", `{"text":"bound"}`)
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "mini says: bound") {
		t.Fatalf("call: exit %d\n%s\n%s", code, stdout, stderr)
	}
	st := as.DPoP()
	if st.BearerRequests != 0 || st.ResourceProofs == 0 || st.TokenProofs == 0 || st.Challenges < 2 || st.Refused != 0 {
		t.Errorf("DPoP stats after login, probe and call: %+v", st)
	}

	// The access token expires: probe refreshes it with a proof of the stored key.
	as.ExpireAll()
	stdout, stderr, code = runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "oauth: DPoP-bound token valid until ") {
		t.Fatalf("probe after expiry: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := as.Count("refresh_token"); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	if n := as.Count("authorization_code"); n != 1 {
		t.Errorf("%d code exchanges, want 1", n)
	}
}

// storedDPoPKeys are the DPoP keys in the token file.
func storedDPoPKeys(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]struct {
		DPoPKey string `json:"dpop_key"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("token file: %v", err)
	}
	var keys []string
	for _, v := range m {
		if v.DPoPKey != "" {
			keys = append(keys, v.DPoPKey)
		}
	}
	return keys
}

// workload is a platform that issues workload tokens: its issuer and key.
type workload struct {
	issuer string
	key    *ecdsa.PrivateKey
}

func newWorkload(t *testing.T, as *oauthtest.Server) *workload {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{issuer: "https://cluster.example/issuer", key: key}
	as.TrustWorkloadIssuer(w.issuer, &key.PublicKey)
	return w
}

// token is a workload token for aud, valid for ttl (expired when ttl < 0).
func (w *workload) token(aud string, ttl time.Duration) string {
	now := time.Now()
	return oauthtest.SignJWT(w.key, "JWT", map[string]any{"iss": w.issuer, "sub": "system:serviceaccount:agents:bridge", "aud": aud, "iat": now.Unix(), "exp": now.Add(ttl).Unix()})
}

// Workload identity federation through the CLI: the workload token is read from a file,
// an environment variable or a command for every run; with the authorization server
// advertising DPoP and handing out a new nonce on every response, the tokens are bound.
// What cannot work fails in probe with the reason: a missing file, a token for another
// audience (not sent), an expired token the server refuses (not retried).
func TestWorkloadIdentityCLI(t *testing.T) {
	userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	as.SetDPoP(oauthtest.DPoPOptions{Algs: []string{"ES256"}, ASNonce: oauthtest.NonceEvery, RSNonce: oauthtest.NonceEvery})
	wl := newWorkload(t, as)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, wl.token(as.Issuer(), 10*time.Minute)+"\n")
	t.Setenv(tokenEnv, wl.token(as.Issuer()+"/token", 10*time.Minute))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "servers.yaml")
	writeFile(t, file, "servers:\n"+
		"  fromfile:\n    url: "+as.URL()+"\n    auth: {type: workload_identity, token_file: "+tokenFile+"}\n"+
		"  fromenv:\n    url: "+as.URL()+"\n    auth: {type: workload_identity, token_env: "+tokenEnv+", dpop: off}\n"+
		"  fromcommand:\n    url: "+as.URL()+"\n    auth:\n      type: workload_identity\n      token_command: ["+self+"]\n")
	var outputs []string
	secretsNeverPrinted(t, &outputs, as.Issued)

	t.Setenv(serverEnv, "printtoken")
	stdout, stderr, code := runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 0 {
		t.Fatalf("probe: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"workload_identity: DPoP-bound token valid until ", // fromfile, fromcommand
		"workload_identity: token valid until ",            // fromenv, dpop: off
		"(jwt-bearer grant)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("probe lacks %q:\n%s", want, stdout)
		}
	}
	if n := as.Count("urn:ietf:params:oauth:grant-type:jwt-bearer"); n != 3 {
		t.Errorf("%d jwt-bearer grants, want 3", n)
	}
	if st := as.DPoP(); st.ResourceProofs == 0 || st.BearerRequests == 0 || st.Refused != 0 {
		t.Errorf("DPoP stats: %+v", st)
	}

	// The file is read again in every run: a token for another audience is not sent, and an
	// expired one is refused by the server, once; a missing file says so.
	tests := []struct {
		name, token string
		remove      bool
		want        []string
		sent        bool
	}{
		{name: "other audience", token: wl.token("https://elsewhere.example", time.Minute),
			want: []string{`the workload token is for audience "https://elsewhere.example", not this authorization server`, "not sending it"}},
		{name: "expired", token: wl.token(as.Issuer(), -time.Hour), sent: true,
			want: []string{"the authorization server refused the workload token", "invalid_grant", "JWT assertion is expired", "it expired at ", "not retrying"}},
		{name: "missing file", remove: true, want: []string{"the workload token file " + tokenFile + " does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.remove {
				if err := os.Remove(tokenFile); err != nil {
					t.Fatal(err)
				}
			} else {
				writeFile(t, tokenFile, tt.token)
			}
			one := filepath.Join(dir, "one.yaml")
			writeFile(t, one, "servers:\n  fromfile:\n    url: "+as.URL()+"\n    auth: {type: workload_identity, token_file: "+tokenFile+"}\n")
			before := as.Count("urn:ietf:params:oauth:grant-type:jwt-bearer")
			stdout, stderr, code := runCLI(t, "probe", one)
			outputs = append(outputs, stdout, stderr)
			if code != 2 {
				t.Errorf("exit %d, want 2\n%s", code, stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("probe lacks %q:\n%s", w, stdout)
				}
			}
			sent := as.Count("urn:ietf:params:oauth:grant-type:jwt-bearer") - before
			if want := map[bool]int{true: 1, false: 0}[tt.sent]; sent != want {
				t.Errorf("%d jwt-bearer requests, want %d", sent, want)
			}
		})
	}
}

// Enterprise-managed authorization through the CLI: the user's ID token (from single
// sign-on, in a file) is exchanged at the identity provider for an ID-JAG, which the MCP
// server's authorization server takes in the jwt-bearer grant from the authenticated
// client. An expired ID token fails with the identity provider's reason.
func TestEnterpriseCLI(t *testing.T) {
	userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	as.AddClient("agent-app", "agent-secret-do-not-print")
	idp := as.StartIdP("agent-at-idp", "agent-app")
	dir := t.TempDir()
	idFile := filepath.Join(dir, "id_token")
	idToken := idp.IDToken("alice", time.Hour)
	writeFile(t, idFile, idToken)
	file := filepath.Join(dir, "servers.yaml")
	writeFile(t, file, "servers:\n  corp:\n    url: "+as.URL()+"\n    auth:\n      type: enterprise\n"+
		"      client_id: agent-app\n      client_secret: agent-secret-do-not-print\n"+
		"      idp_issuer: "+idp.Issuer()+"\n      idp_client_id: agent-at-idp\n      token_file: "+idFile+"\n")
	var outputs []string
	secretsNeverPrinted(t, &outputs, func() []string {
		return append(as.Issued(), "agent-secret-do-not-print", idToken)
	})

	stdout, stderr, code := runCLI(t, "call", file, "echo", `{"text":"sso"}`)
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "mini says: sso") {
		t.Fatalf("call: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "enterprise: token valid until ") || !strings.Contains(stdout, "(jwt-bearer grant)") {
		t.Fatalf("probe: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := idp.Exchanges(); n != 2 {
		t.Errorf("%d token exchanges for two runs, want 2", n)
	}

	writeFile(t, idFile, idp.IDToken("alice", -time.Minute))
	stdout, stderr, code = runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	for _, want := range []string{"the identity provider refused to exchange the ID token", "the ID token expired", "sign in at the identity provider again"} {
		if code != 2 || !strings.Contains(stdout, want) {
			t.Errorf("probe with an expired ID token: exit %d, lacks %q:\n%s", code, want, stdout)
		}
	}
}
