// Package slack is the one allowance for wall-clock upper bounds in mcpbridge's tests. Only
// test files import it.
//
// Where a test's server runs in the test's own process, time-dependent behaviour is tested
// in a testing/synctest bubble: time is fake, and a bound is exact (see bridge's
// faketime_test.go and timing_test.go). Where it cannot be, because the server is a real
// process or sits behind a real socket, a test that wants to say "this returned at its
// deadline, not after some other wait" calls [Within]. Such a bound does not measure speed
// (benchmarks do); it tells "stopped when it should" from "waited for something it should
// have cut short", such as a whole connect timeout or a process that is never killed. So
// the allowance is generous and the same everywhere: 2×want + 10s, and 3×want + 30s under
// the race detector, enough for a 2-core machine shared by several test suites. A test using
// it chooses its timeouts so that the failure it looks for takes longer than that.
package slack

import (
	"testing"
	"time"
)

// Limit is the most a wall-clock duration expected to be about want may take in a test.
func Limit(want time.Duration) time.Duration {
	if raceEnabled {
		return 3*want + 30*time.Second
	}
	return 2*want + 10*time.Second
}

// Within reports an error when took, the duration of what, exceeds Limit(want).
func Within(t testing.TB, what string, took, want time.Duration) {
	t.Helper()
	if limit := Limit(want); took > limit {
		t.Errorf("%s took %s; expected about %s (the limit, with the slack a loaded machine needs, is %s)", what, took.Round(time.Millisecond), want, limit)
	}
}
