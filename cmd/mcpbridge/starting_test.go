package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStillStarting: a stdio server that has not answered yet says what it is doing instead
// of reading like a fault. The servers are real processes: shell scripts named npx (on
// Linux told apart from a server by their process tree: npm has not started the package
// yet) and, once "installed", the test binary as a real go-sdk server started the way npx
// starts a package (npm_lifecycle_event=npx). The ones that never answer fail the start-up
// (--timeout 3s); the ones that swallow server/discover and serve from initialize on work,
// and the protocol line says why discover went unanswered.
func TestStillStarting(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake servers are shell scripts")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverEnv, "basic") // the server the scripts start once "installed"
	dir := t.TempDir()
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
	const silent = `while read -r line; do :; done` // reads stdin, answers nothing, starts nothing
	// late answers nothing until the second message (initialize, sent once server/discover
	// timed out), then starts the server and hands it initialize and the rest of stdin.
	late := `read -r discover
read -r init
{ printf '%s\n' "$init"; exec cat; } | npm_lifecycle_event=npx '` + bin + `'`
	npmWhy, npmTimeout := "(still starting, or the server ignores it)", "(still starting, or not answering)"
	if runtime.GOOS == "linux" {
		npmWhy, npmTimeout = "(npx is still installing the package)", "(npx is still installing the package)"
	}
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // in stdout
		stderr  string // in the progress line on stderr
		without string // in neither
	}{
		{name: "npx installing at the deadline", args: []string{"probe", "--timeout", "3s", "--", write("a/npx", silent), "-y", "pkg"},
			code: 2, stderr: "initialize: timed out after", stdout: npmTimeout},
		{name: "server silent at the deadline", args: []string{"probe", "--timeout", "3s", "--", write("b/server", silent)},
			code: 2, stderr: "initialize: timed out after", stdout: "(still starting, or not answering)", without: "npx"},
		{name: "npx installing when discover timed out", args: []string{"probe", "--timeout", "12s", "--", write("c/npx", late), "-y", "pkg"},
			stderr: "✓", stdout: "initialize: no answer to server/discover after 3s " + npmWhy},
		{name: "server silent when discover timed out", args: []string{"probe", "--timeout", "12s", "--", write("d/server", late)},
			stderr: "✓", stdout: "initialize: no answer to server/discover after 3s (still starting, or the server ignores it)", without: "npx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if tt.code != 0 && !strings.Contains(stderr, tt.stdout) {
				t.Errorf("the progress line lacks %q:\n%s", tt.stdout, stderr)
			}
			if tt.without != "" && strings.Contains(stdout+stderr, tt.without) {
				t.Errorf("output has %q:\nstdout:\n%s\nstderr:\n%s", tt.without, stdout, stderr)
			}
		})
	}
}
