package toolsearch_test

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), so that a
// latency figure on a loaded machine counts this query's work, not the wait for a core.
// The caller locks its OS thread around what it measures.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
