//go:build !unix && !windows

package transport

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr returns no special attributes on this platform.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the process; there are no process groups here.
func signalGroup(p *os.Process, _ bool) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
