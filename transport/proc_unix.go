//go:build unix

package transport

import (
	"errors"
	"os"
	"syscall"
)

// signalGroup sends SIGKILL (kill) or SIGTERM to the process group led by p.
// A group that no longer exists is not an error.
func signalGroup(p *os.Process, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
