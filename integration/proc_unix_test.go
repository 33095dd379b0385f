//go:build unix

package integration

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of its own process group, so killProcessGroup also
// reaches anything it spawned.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills cmd's whole process group. It is a no-op before Start.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
