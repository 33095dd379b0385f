//go:build linux

package bridge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestNpxInstallingIsNotPinned: a server whose server/discover went unanswered only because
// npx was still installing its package (seen in its process tree on Linux) gets the legacy
// handshake for that session, and its next session negotiates again: once installed, the
// package answers server/discover. The server is a shell script named npx that, the first
// time, reads server/discover and waits (no child of its runs a package: "installing") past
// the discover wait before it starts the test binary as a real go-sdk server, which reads
// initialize; every later start runs the server at once, as npx does with a cached package.
func TestNpxInstallingIsNotPinned(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "installed")
	npx := filepath.Join(dir, "npx")
	script := `#!/bin/sh
if [ -e '` + mark + `' ]; then exec env npm_lifecycle_event=npx '` + bin + `'; fi
read -r discover
: > '` + mark + `'
sleep 4
exec env npm_lifecycle_event=npx '` + bin + `'
`
	if err := os.WriteFile(npx, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := stdioConfig(t, "s", "basic")
	cfg.Command, cfg.Args = npx, []string{"-y", "pkg"}
	cfg.ConnectTimeout = 8 * time.Second // server/discover waits a quarter of it: 2s
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := set.Servers()[0]
	st := s.Status()
	if st.ProtocolVersion != "2025-11-25" || !strings.Contains(st.Negotiation, "npx is still installing the package") {
		t.Fatalf("first session: protocol %q (%s), want 2025-11-25 after npx was seen installing", st.ProtocolVersion, st.Negotiation)
	}
	tools := set.Tools()
	ctx := ctxT(t, 30*time.Second)
	if _, err := byName(t, tools, "exit").Handler(ctx, nil); err == nil {
		t.Fatal("exit: no error")
	}
	if _, err := byName(t, tools, "add").Handler(ctx, json.RawMessage(`{"a":1,"b":1}`)); err != nil {
		t.Fatalf("add after the server exited: %v", err)
	}
	if st := s.Status(); st.ProtocolVersion != "2026-07-28" || st.Negotiation != "server/discover" {
		t.Errorf("after the redial: protocol %q (%s), want 2026-07-28 through server/discover (no legacy pin kept for a server npx was installing)", st.ProtocolVersion, st.Negotiation)
	}
}
