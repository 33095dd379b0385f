package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

var sgrRE = regexp.MustCompile(`\x1b\[[0-9;]*m`) // ANSI colour (SGR) sequences

// TestTerminal runs the built binary under a pseudo-terminal (util-linux script) and checks
// the progress display (\r status line updates; "missing" fails at once, so 1/4 is always
// drawn) and colours, and that NO_COLOR removes them.
func TestTerminal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no pseudo-terminal test on Windows")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("script (util-linux) is needed for the terminal test under CI: %v", err)
		}
		t.Skipf("script (util-linux) not found, terminal test skipped: %v", err)
	}
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcpbridge")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f := writeFixture(t, "claude_desktop.json", false)

	tests := []struct {
		name    string
		noColor bool
	}{
		{name: "colour", noColor: false},
		{name: "NO_COLOR", noColor: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmdline := shellQuote(bin) + " probe " + shellQuote(f.path)
			ctx := t.Context()
			cmd := exec.CommandContext(ctx, script, "-qfec", cmdline, "/dev/null")
			cmd.WaitDelay = 10 * time.Second
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, serverEnv+"=") {
					env = append(env, kv)
				}
			}
			if tt.noColor {
				env = append(env, "NO_COLOR=1")
			}
			cmd.Env = append(env, "TERM=xterm")
			out, err := cmd.Output()
			// script -e passes the command's exit status on: broken and missing fail.
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Errorf("exit: %v, want status 2\n%q", err, out)
			}
			s := string(out)
			checkNoSecrets(t, s)
			for _, want := range []string{"connecting 0/4…", "connecting 1/4…", "\r\x1b[K", "basic  6 tools", "missing  start:", "basic  ok"} {
				if !strings.Contains(s, want) {
					t.Errorf("terminal output lacks %q:\n%q", want, s)
				}
			}
			colours := sgrRE.FindAllString(s, -1)
			if tt.noColor && len(colours) > 0 {
				t.Errorf("NO_COLOR=1 but got colour sequences %q:\n%q", colours, s)
			}
			if !tt.noColor {
				for _, want := range []string{"\x1b[32m✓\x1b[0m basic", "\x1b[31m✗\x1b[0m missing"} {
					if !strings.Contains(s, want) {
						t.Errorf("terminal output lacks coloured %q:\n%q", want, s)
					}
				}
			}
		})
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
