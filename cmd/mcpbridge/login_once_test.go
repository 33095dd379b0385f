package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// lockedBuf is stderr for a login that no browser follows.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// oauthFile writes a servers file with one OAuth server.
func oauthFile(t *testing.T, url string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(file, []byte("servers:\n  tracker:\n    url: "+url+"\n    auth: {type: oauth}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// One failed authorization ends the login with its own reason: the person is asked once
// (one URL, one wait), never a second time, whether the authorization server refused or the
// browser never came back.
func TestLoginAsksOnceAndSaysWhy(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		userConfigDir(t)
		as := oauthtest.New(newTestServer("mini"))
		t.Cleanup(as.Close)
		as.Deny(true)
		b := &browser{t: t}
		stdout, code := runWith(t, b, "login", oauthFile(t, as.URL()), "tracker", "--no-browser")
		b.wg.Wait()
		if n := strings.Count(b.String(), "To log in to tracker"); n != 1 || code != exitFailed ||
			!strings.Contains(stdout, "tracker: login failed") || !strings.Contains(stdout, "access_denied") {
			t.Errorf("exit %d, asked %d times, want 2, once, saying access_denied\nstdout:\n%s\nstderr:\n%s", code, n, stdout, b.String())
		}
	})
	t.Run("no redirect", func(t *testing.T) {
		userConfigDir(t)
		as := oauthtest.New(newTestServer("mini"))
		t.Cleanup(as.Close)
		var stderr lockedBuf // nobody follows the URL
		stdout, code := runWith(t, &stderr, "login", oauthFile(t, as.URL()), "tracker", "--no-browser", "--wait", "200ms")
		if n := strings.Count(stderr.String(), "To log in to tracker"); n != 1 || code != exitFailed ||
			!strings.Contains(stdout, "no redirect from the browser within 200ms") {
			t.Errorf("exit %d, asked %d times, want 2, once, saying no redirect within 200ms\nstdout:\n%s\nstderr:\n%s", code, n, stdout, stderr.String())
		}
	})
}
