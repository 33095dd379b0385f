//go:build linux

package transport_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/transport"
)

// TestInstalling runs process trees shaped like npx's while it installs a package and once
// it runs it (real processes: shell scripts named like npm's processes; npm names itself
// "npm exec <package>" and starts the package with npm_lifecycle_event=npx, install scripts
// with their own event), and one that is not npm. Each script touches $MARK once its tree
// is complete, so Installing is asserted on the final tree.
func TestInstalling(t *testing.T) {
	dir := t.TempDir()
	// write puts an executable script at dir/name.
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\nst=$?\nexit $st\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const (
		fetching = `: > "$MARK"; while read -r line; do :; done` // no child yet: npm downloading
		child    = `sh -c ': > "$MARK"; exec cat >/dev/null'`    // a child that stays
	)
	nodeDir := filepath.Join(dir, "node")
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/sh", filepath.Join(nodeDir, "node")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmd  []string
		want bool
	}{
		{"npx fetching", []string{write("a/npx", fetching)}, true},
		{"npm exec fetching", []string{write("b/npm exec x", fetching)}, true},
		{"node running npx-cli.js", []string{filepath.Join(nodeDir, "node"), write("c/npx-cli.js", fetching)}, true},
		{"npx running an install script", []string{write("d/npx", "npm_lifecycle_event=postinstall "+child)}, true},
		{"npx under a shell", []string{write("e/run", write("e/sub/npx", fetching))}, true},
		{"npx running the package", []string{write("f/npx", "npm_lifecycle_event=npx "+child)}, false},
		{"npm running a script", []string{write("g/npm", "npm_lifecycle_event=start "+child)}, false},
		{"not npm", []string{write("h/server", fetching)}, false},
		{"node running a server", []string{filepath.Join(nodeDir, "node"), write("i/index.js", fetching)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "mark")
			c, err := transport.Open(transport.Spec{ID: "npm", Command: tt.cmd[0], Args: tt.cmd[1:], Env: map[string]string{"MARK": mark}}, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Installing() {
				t.Error("Installing() before the process started")
			}
			if _, err := c.Transport().Connect(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the script's mark", 20*time.Second, func() bool {
				_, err := os.Stat(mark)
				return err == nil
			})
			if got := c.Installing(); got != tt.want {
				t.Errorf("Installing() = %v, want %v", got, tt.want)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if c.Installing() {
				t.Error("Installing() after Close")
			}
		})
	}
}
