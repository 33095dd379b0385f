//go:build !linux

package integration

import "time"

// openFDs is -1 where file descriptors are not counted (no /proc/self/fd): BenchmarkScale
// reports 0 for them.
func openFDs() int { return -1 }

// threadCPU is wall time where the thread's CPU clock is not read.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
