//go:build unix

package bridge_test

import (
	"syscall"
	"time"
)

// processExists reports whether pid exists now (a zombie counts: it was not reaped).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// processGone polls until pid no longer exists, for at most d.
func processGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for processExists(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
