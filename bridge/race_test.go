//go:build race

package bridge_test

// raceEnabled: the race detector slows CPU-bound work about tenfold.
const raceEnabled = true
