package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// userConfigDir points os.UserConfigDir (and so the default token store) at a temp dir.
func userConfigDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("AppData", dir)
	cfg, err := os.UserConfigDir()
	if err != nil || !strings.HasPrefix(cfg, dir) {
		t.Fatalf("UserConfigDir = %q, %v: not under the test's dir", cfg, err)
	}
	return filepath.Join(cfg, "mcpbridge", "tokens.json")
}

// browser is stderr that plays the person at the browser: when login prints an
// authorization URL it first sends a forged redirect (wrong state), then follows the URL to
// the loopback redirect as a browser would, and keeps the pages it got.
type browser struct {
	t     *testing.T
	mu    sync.Mutex
	buf   bytes.Buffer
	seen  int
	wg    sync.WaitGroup
	pages []string // the callback page bodies: forged first, then the real one
	codes []int
}

var authURLRE = regexp.MustCompile(`(?m)^  (http://127\.0\.0\.1:\d+/authorize\?\S+)$`)

func (b *browser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	for _, m := range authURLRE.FindAllStringSubmatch(b.buf.String(), -1)[b.seen:] {
		b.seen++
		b.wg.Go(func() { b.visit(m[1]) })
	}
	return len(p), nil
}

func (b *browser) visit(authURL string) {
	u, err := url.Parse(authURL)
	if err != nil {
		b.t.Error(err)
		return
	}
	forged, _ := url.Parse(u.Query().Get("redirect_uri"))
	forged.RawQuery = url.Values{"code": {"forged"}, "state": {"not-the-state"}}.Encode()
	for _, target := range []string{forged.String(), authURL} {
		resp, err := http.Get(target)
		if err != nil {
			b.t.Error(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.mu.Lock()
		b.pages = append(b.pages, string(body))
		b.codes = append(b.codes, resp.StatusCode)
		b.mu.Unlock()
	}
}

func (b *browser) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func runWith(t *testing.T, stderr io.Writer, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	err := run(t.Context(), args, &out, stderr)
	return out.String(), exitCode(err, stderr)
}

// login against a local authorization server with the test as the browser; then probe
// uses the stored token and shows its state, logout forgets it and probe says to log in.
// No token or code is ever printed.
func TestLoginProbeLogout(t *testing.T) {
	tokens := userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	as.AddClient("svc", "cc-secret-do-not-print")
	dir := t.TempDir()
	file := filepath.Join(dir, "servers.yaml")
	yaml := "servers:\n  tracker:\n    url: " + as.URL() + "\n    auth: {type: oauth}\n" +
		"  billing:\n    url: " + as.URL() + "\n    auth: {type: client_credentials, client_id: svc, client_secret: cc-secret-do-not-print}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var outputs []string
	t.Cleanup(func() {
		secrets := append(as.Issued(), "cc-secret-do-not-print")
		for _, out := range outputs {
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("secret %q printed:\n%s", s, out)
				}
			}
		}
	})

	// Before a login: probe fails the OAuth server and says what to run.
	stdout, stderr, code := runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 2 || !strings.Contains(stdout, "needs login") || !strings.Contains(stdout, "run `mcpbridge login "+file+" tracker`") {
		t.Fatalf("probe before login: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "client_credentials: token valid until ") {
		t.Errorf("probe does not show billing's grant:\n%s", stdout)
	}

	b := &browser{t: t}
	stdout, code = runWith(t, b, "login", file, "--no-browser", "--wait", "1m")
	b.wg.Wait()
	outputs = append(outputs, stdout, b.String())
	if code != 0 {
		t.Fatalf("login: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, b.String())
	}
	if want := "tracker: logged in; oauth: token valid until "; !strings.Contains(stdout, want) || !strings.Contains(stdout, "refresh token kept") {
		t.Errorf("login stdout lacks %q:\n%s", want, stdout)
	}
	b.mu.Lock()
	pages, codes := b.pages, b.codes
	b.mu.Unlock()
	if len(pages) != 2 || codes[0] != http.StatusBadRequest || !strings.Contains(pages[0], "state does not match") ||
		codes[1] != http.StatusOK || !strings.Contains(pages[1], "You can close this tab") {
		t.Errorf("callback pages = %d %q", codes, pages)
	}
	if n := as.Count("authorization_code"); n != 1 {
		t.Errorf("%d code exchanges, want 1 (the forged redirect must not reach the token endpoint)", n)
	}
	if fi, err := os.Stat(tokens); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}

	// probe uses the stored token, headless, and shows its state (human and JSON).
	stdout, stderr, code = runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "oauth: token valid until ") || !strings.Contains(stdout, "refresh token kept") {
		t.Fatalf("probe after login: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "probe", file, "--json")
	outputs = append(outputs, stdout, stderr)
	var rep struct {
		Servers []struct {
			ID   string
			Auth *struct {
				Type         string
				Expiry       time.Time
				RefreshToken bool
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("probe --json: exit %d, %v\n%s", code, err, stdout)
	}
	for _, s := range rep.Servers {
		if s.Auth == nil || s.Auth.Expiry.IsZero() || s.Auth.RefreshToken != (s.ID == "tracker") {
			t.Errorf("%s: auth = %+v", s.ID, s.Auth)
		}
	}
	if n := as.Count("authorization_code"); n != 1 {
		t.Errorf("%d code exchanges after probe, want still 1", n)
	}

	stdout, stderr, code = runCLI(t, "logout", file, "tracker")
	outputs = append(outputs, stdout, stderr)
	if code != 0 || !strings.Contains(stdout, "tracker: logged out") {
		t.Fatalf("logout: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "probe", file)
	outputs = append(outputs, stdout, stderr)
	if code != 2 || !strings.Contains(stdout, "needs login") {
		t.Errorf("probe after logout: exit %d\n%s", code, stdout)
	}
}

// The person refuses at the authorization server: login fails with its error, at once.
func TestLoginDenied(t *testing.T) {
	userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	as.Deny(true)
	file := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(file, []byte("servers:\n  tracker:\n    url: "+as.URL()+"\n    auth: {type: oauth}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t}
	stdout, code := runWith(t, b, "login", file, "tracker", "--no-browser")
	b.wg.Wait()
	if code != 2 || !strings.Contains(stdout, "tracker: login failed") || !strings.Contains(stdout, "access_denied") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, b.String())
	}
}

func TestLoginUsage(t *testing.T) {
	userConfigDir(t)
	file := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(file, []byte("servers:\n  plain:\n    url: http://127.0.0.1:1/mcp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"login", file}, "no server has auth"},
		{[]string{"login", file, "nope"}, `no enabled server "nope"`},
		{[]string{"login", file, "plain"}, `server "plain" has no auth setting`},
		{[]string{"logout", file}, "at least 2 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[2:], " "), func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
		})
	}
}

// The redirect listener: 127.0.0.1, only the expected state, one use, a timeout.
func TestLoopbackListener(t *testing.T) {
	lb, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer lb.close()
	if !strings.HasPrefix(lb.redirectURL, "http://127.0.0.1:") {
		t.Fatalf("redirect URL %s", lb.redirectURL)
	}
	get := func(q string) int {
		resp, err := http.Get(lb.redirectURL + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := get("code=c&state=s1"); c != http.StatusBadRequest {
		t.Errorf("before expect: %d", c)
	}
	if err := lb.expect("https://as.example/authorize?state=s1"); err != nil {
		t.Fatal(err)
	}
	if err := lb.expect("https://as.example/authorize"); err == nil {
		t.Error("an authorization URL without state accepted")
	}
	_ = lb.expect("https://as.example/authorize?state=s1")
	for _, tt := range []struct {
		q    string
		want int
	}{{"code=c&state=s2", 400}, {"code=c", 400}, {"code=c&state=s1", 200}, {"code=c&state=s1", 410}} {
		if c := get(tt.q); c != tt.want {
			t.Errorf("%s: %d, want %d", tt.q, c, tt.want)
		}
	}
	res, err := lb.wait(context.Background(), time.Minute)
	if err != nil || *res != (auth.AuthorizationResult{Code: "c", State: "s1"}) {
		t.Errorf("wait = %+v, %v", res, err)
	}
	_ = lb.expect("https://as.example/authorize?state=s3")
	if _, err := lb.wait(context.Background(), 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no redirect from the browser within") {
		t.Errorf("timeout: %v", err)
	}
}

func TestBrowserCommand(t *testing.T) {
	display := func(k string) string {
		if k == "DISPLAY" {
			return ":0"
		}
		return ""
	}
	none := func(string) string { return "" }
	const u = "https://as.example/authorize?state=x&a=b"
	tests := []struct {
		goos, url string
		env       func(string) string
		want      []string // argv; nil: refused
	}{
		{"linux", u, display, []string{"xdg-open", u}},
		{"linux", u, none, nil},
		{"darwin", u, none, []string{"open", u}},
		{"windows", u, none, []string{"rundll32", "url.dll,FileProtocolHandler", u}},
		{"linux", "http://127.0.0.1:8080/authorize", display, []string{"xdg-open", "http://127.0.0.1:8080/authorize"}},
		{"windows", "http://as.example/authorize", none, nil},
		{"windows", "file:///C:/Windows/System32/calc.exe", none, nil},
		{"darwin", "-a Calculator", none, nil},
		{"linux", "javascript:alert(1)", display, nil},
	}
	for _, tt := range tests {
		cmd, err := browserCommand(tt.goos, tt.url, tt.env)
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s %q: opened %v", tt.goos, tt.url, cmd.Args)
			}
			continue
		}
		if err != nil || strings.Join(cmd.Args, "\x00") != strings.Join(tt.want, "\x00") {
			t.Errorf("%s %q: %v, %v; want %q", tt.goos, tt.url, cmd, err, tt.want)
		}
	}
}

// Whatever the redirect's query holds, the callback answers without panicking, hands over
// at most one result, and only for the state it waits for; what it shows is printable.
func FuzzLoopbackCallback(f *testing.F) {
	for _, q := range []string{"code=c&state=s", "state=s&error=access_denied&error_description=no%0d%0a%1b[31m", "state=x", "", "state=s&state=t&code=1", "%zz"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		lb := &loopback{got: make(chan callbackResult, 1), state: "s"}
		w := httptest.NewRecorder()
		lb.callback(w, &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/callback", RawQuery: q}})
		body := w.Body.String()
		for _, r := range body {
			if (r < 0x20 && r != '\n') || r == 0x7f {
				t.Fatalf("control character in the page: %q", body)
			}
		}
		parsed, _ := url.ParseQuery(q)
		select {
		case r := <-lb.got:
			if parsed.Get("state") != "s" {
				t.Fatalf("result for state %q", parsed.Get("state"))
			}
			if r.res != nil && r.res.Code != parsed.Get("code") {
				t.Fatalf("code %q", r.res.Code)
			}
		default:
			if parsed.Get("state") == "s" {
				t.Fatalf("no result for the right state (%q), page %d %q", q, w.Code, body)
			}
		}
	})
}
