package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// call on a server that needs a login: the tool is not offered because the server was
// skipped, not because the name is wrong, so the exit is 2 (a server failed) and stderr
// says to log in, never the usage error "no model-visible tool".
func TestCallOnServerThatNeedsLogin(t *testing.T) {
	userConfigDir(t)
	as := oauthtest.New(newTestServer("mini"))
	t.Cleanup(as.Close)
	file := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(file, []byte("servers:\n  tracker:\n    url: "+as.URL()+"\n    auth: {type: oauth}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "call", file, "echo", `{"text":"hi"}`)
	if code != exitFailed || !strings.Contains(stderr, "needs login") || !strings.Contains(stderr, "mcpbridge login "+file+" tracker") ||
		strings.Contains(stderr, "no model-visible tool") {
		t.Errorf("exit %d, want %d with the needs-login message\nstdout:\n%s\nstderr:\n%s", code, exitFailed, stdout, stderr)
	}
}
