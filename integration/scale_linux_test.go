//go:build linux

package integration

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// openFDs is the number of file descriptors this process has open (/proc/self/fd).
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries) - 1 // the directory read itself holds one
}

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), so that a
// latency figure on a loaded machine counts the work, not the wait for a core. The caller
// locks its OS thread around what it measures.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
