//go:build !unix

package integration

import "os/exec"

// setProcessGroup is a no-op where process groups are not available.
func setProcessGroup(cmd *exec.Cmd) {}

// killProcessGroup kills cmd's process. It is a no-op before Start.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Kill()
}
