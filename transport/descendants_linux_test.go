//go:build linux

package transport_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/transport"
)

// startDetached starts this test binary in mode in a new session (setsid) and does not wait
// for it.
func startDetached(mode string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "MCPBRIDGE_TRANSPORT_TEST_MODE="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// A stdio server that double-forks a setsid daemon (which leaves its process group, so the
// group kill misses it) does not leave the daemon running after Close: it carries the
// connection's tag in its environment and is found by it.
func TestCloseKillsDaemonThatLeftTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	spec := stdioSpec(t, "daemonizer", "daemonize")
	spec.Env["MCPB_PIDFILE"] = pidFile
	c, err := transport.Open(spec, transport.KindStdio)
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, testCtx(t), c)
	listAll(t, testCtx(t), cs)
	var pid int
	waitFor(t, "the daemon's pid file", 20*time.Second, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // if the test fails
	if !alive(pid) {
		t.Fatalf("daemon %d not running", pid)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if pgid == c.PID() {
		t.Fatalf("the daemon is still in the server's process group %d; the fixture did not detach", pgid)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the daemon to be gone", 10*time.Second, func() bool { return !alive(pid) })
}
