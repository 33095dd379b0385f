//go:build linux

package transport

import "syscall"

// sysProcAttr puts the child in its own process group, and has the kernel
// SIGKILL it if the parent dies. (Pdeathsig fires when the OS thread that
// started the child exits; the Go runtime only exits threads of goroutines
// that end while locked to their thread, which this package never does.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
