//go:build windows

package transport

import (
	"errors"
	"os"
	"syscall"
)

// sysProcAttr starts the child in a new process group (so console signals
// meant for the parent do not reach it).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// signalGroup terminates the process: Windows has no SIGTERM, and the
// process's own children are not tracked (that would need a job object).
func signalGroup(p *os.Process, _ bool) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
