//go:build unix

package main

import (
	"bytes"
	"context"
	"github.com/ttalk/mcpbridge/internal/slack"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt cancels probe (as Ctrl-C does) while a server hangs in initialize: run must
// return promptly with exit code 2, and the server process must be gone (killed and reaped).
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "servers.yaml")
	yaml := "servers:\n  stuck:\n    command: " + strconv.Quote(bin) + "\n    env:\n      " + serverEnv + ": hang\n      " + pidFileEnv + ": " + strconv.Quote(pidFile) + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pid := make(chan int, 1)
	go func() { // cancel once the server runs
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				n, _ := strconv.Atoi(string(b))
				pid <- n
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond) // polling a file, bounded by the deadline
		}
		pid <- 0
		cancel()
	}()
	var out, errb bytes.Buffer
	start := time.Now()
	err = run(ctx, []string{"probe", cfg}, &out, &errb)
	code := exitCode(err, &errb)
	p := <-pid
	if p == 0 {
		t.Fatal("the hang server never started")
	}
	if code != exitFailed || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit code %d, stderr:\n%s\nwant 2 and \"interrupted\"", code, errb.String())
	}
	if !strings.Contains(out.String(), "stuck  FAILED") {
		t.Errorf("report lacks the interrupted server:\n%s", out.String())
	}
	slack.Within(t, "probe stopping after the interrupt", time.Since(start), 0)
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(p, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still exists (or is an unreaped zombie) after probe returned", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
