//go:build unix

package transport_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/internal/slack"
	"github.com/ttalk/mcpbridge/transport"
)

// procState returns the state of pid: "gone", "zombie(ppid)" or "alive".
func procState(pid int) string {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) S ppid ...
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		var state string
		var ppid int
		fmt.Sscanf(rest, "%s %d", &state, &ppid)
		if state == "Z" {
			return fmt.Sprintf("zombie(%d)", ppid)
		}
		return "alive"
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return "gone"
	}
	if _, err := os.Stat("/proc/self"); err == nil {
		return "gone" // /proc exists but the pid does not
	}
	return "alive"
}

// checkGone asserts pid ends up gone. A zombie is only accepted when its
// parent is not this process (reaping it is then init's job, not ours).
func checkGone(t *testing.T, what string, pid int) {
	t.Helper()
	var st string
	deadline := time.Now().Add(5 * time.Second)
	for {
		st = procState(pid)
		if st == "gone" || (strings.HasPrefix(st, "zombie") && st != fmt.Sprintf("zombie(%d)", os.Getpid())) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is %s after Close", what, pid, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStdioCloseKillsProcessGroup(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		script string // run by sh -c with $0 = the test binary
	}{
		// sh execs the server; a background grandchild stays in the group.
		{"exec with background grandchild", `sleep 300 & echo "gc=$!" >&2; exec "$0"`},
		// sh stays as the parent of the server (a grandchild), like npx.
		{"server as grandchild", `"$0"; echo "sh done" >&2`},
		// The grandchild ignores stdin EOF and SIGTERM.
		{"stubborn grandchild", `MCPBRIDGE_TRANSPORT_TEST_MODE=stubborn "$0" </dev/null & echo "gc=$!" >&2; exec "$0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			spec := transport.Spec{ID: "grp", Command: "sh", Args: []string{"-c", tt.script, exe},
				Env: map[string]string{envMode: "server", "GORACE": "atexit_sleep_ms=0"}, Grace: 300 * time.Millisecond}
			c, err := transport.Open(spec, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, ctx, c)
			listAll(t, ctx, cs)
			checkRawTools(t, c.TakeTools())
			serverPID := pidFromStderr(t, c, "pid")
			gc := 0
			if strings.Contains(tt.script, "gc=") {
				gc = pidFromStderr(t, c, "gc")
			}
			child := c.PID()
			start := time.Now()
			cs.Close()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			slack.Within(t, "Close", time.Since(start), 2*spec.Grace)
			select {
			case <-c.Exited():
			default:
				t.Fatal("Exited() not closed when Close returned")
			}
			checkGone(t, "child", child)
			checkGone(t, "server", serverPID)
			if gc != 0 {
				checkGone(t, "grandchild", gc)
			}
		})
	}
}

func TestStdioCloseBoundedForStubbornProcess(t *testing.T) {
	const grace = 200 * time.Millisecond
	spec := stdioSpec(t, "stubborn", "stubborn")
	spec.Grace = grace
	c, err := transport.Open(spec, transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transport().Connect(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "child ready", 20*time.Second, func() bool { return strings.Contains(c.Stderr(), "ready\n") })
	pid := c.PID()
	start := time.Now()
	err = c.Close()
	elapsed := time.Since(start)
	t.Logf("Close of a process ignoring stdin EOF and SIGTERM took %v (grace %v)", elapsed, grace)
	if err != nil {
		t.Errorf("Close: %v", err)
	}
	if elapsed < 2*grace {
		t.Errorf("Close took %v, less than 2*grace: it did not wait before escalating", elapsed)
	}
	slack.Within(t, "Close of a process ignoring stdin EOF and SIGTERM", elapsed, 2*grace+time.Second)
	if ee := c.ExitError(); ee == nil {
		t.Error("ExitError() = nil for a killed process")
	} else if !strings.Contains(ee.Error(), "killed") {
		t.Errorf("ExitError() = %v, want killed", ee)
	}
	checkGone(t, "stubborn child", pid)
}

// pidFromStderr waits for a "<key>=<pid>" line in c's stderr.
func pidFromStderr(t *testing.T, c *transport.Conn, key string) int {
	t.Helper()
	pid := 0
	waitFor(t, key+" in stderr", 20*time.Second, func() bool {
		for line := range strings.SplitSeq(c.Stderr(), "\n") {
			if v, ok := strings.CutPrefix(line, key+"="); ok {
				if _, err := fmt.Sscanf(v, "%d", &pid); err == nil {
					return true
				}
			}
		}
		return false
	})
	return pid
}
