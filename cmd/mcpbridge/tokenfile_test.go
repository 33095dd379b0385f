package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// A token file refused for its permissions is named, with its mode and the fix, by probe,
// call and login; never "no OAuth token is stored" or "no redirect from the browser".
func TestTokenFileRefusedIsExplained(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not checked on Windows")
	}
	tokens := userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	file := oauthFile(t, as.URL())
	if err := os.MkdirAll(filepath.Dir(tokens), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(what, out string, code int) {
		t.Helper()
		if code != exitFailed || !strings.Contains(out, tokens) || !strings.Contains(out, "-rw-r--r--") || !strings.Contains(out, "chmod 600") ||
			strings.Contains(out, "no OAuth token is stored") || strings.Contains(out, "no redirect from the browser") {
			t.Errorf("%s: exit %d, want 2 naming %s, its mode and chmod 600:\n%s", what, code, tokens, out)
		}
	}
	stdout, stderr, code := runCLI(t, "probe", file)
	check("probe", stdout+stderr, code)
	stdout, stderr, code = runCLI(t, "call", file, "echo", `{"text":"hi"}`)
	check("call", stdout+stderr, code)
	b := &browser{t: t}
	stdout, code = runWith(t, b, "login", file, "tracker", "--no-browser", "--wait", "1m")
	b.wg.Wait()
	check("login", stdout+b.String(), code)
	if n := strings.Count(b.String(), "To log in to tracker"); n != 1 {
		t.Errorf("login asked %d times, want once", n)
	}
}
