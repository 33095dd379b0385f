//go:build !linux

package toolsearch_test

import "time"

// threadCPU is wall time where the thread's CPU clock is not read (see the Linux version).
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
