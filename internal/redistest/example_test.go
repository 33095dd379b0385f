package redistest_test

import (
	"fmt"
	"testing"

	"github.com/ttalk/mcpbridge/internal/redistest"
)

// TestStart: the server answers at the address, and keeps what it is told.
func TestStart(t *testing.T) {
	addr := redistest.Start(t)
	if r, err := redistest.Do(addr, "SET", "k", "v w"); err != nil || r != "OK" {
		t.Fatalf("set = %q, %v", r, err)
	}
	if v, err := redistest.Do(addr, "GET", "k"); err != nil || v != "v w" {
		t.Fatalf("get = %q, %v", v, err)
	}
	if v, err := redistest.Do(addr, "GET", "missing"); err != nil || v != "" {
		t.Fatalf("get missing = %q, %v", v, err)
	}
}

// TestServerRestart: a killed server refuses connections; started again on the same
// address it still holds what it was told before the kill.
func TestServerRestart(t *testing.T) {
	s := redistest.StartServer(t)
	if r, err := redistest.Do(s.Addr(), "SET", "k", "kept"); err != nil || r != "OK" {
		t.Fatalf("set = %q, %v", r, err)
	}
	s.Kill()
	if r, err := redistest.Do(s.Addr(), "PING"); err == nil {
		t.Fatalf("a killed server answered %q", r)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if v, err := redistest.Do(s.Addr(), "GET", "k"); err != nil || v != "kept" {
		t.Fatalf("get after the restart = %q, %v", v, err)
	}
}

// Start needs a test's testing.TB; testing.Benchmark gives one here. Like the package's
// tests it needs redis-server (.ci/run installs it).
func Example() {
	ran := false
	testing.Benchmark(func(b *testing.B) { // called again with a larger b.N: once is enough
		if ran {
			return
		}
		ran = true
		fmt.Println(redistest.Do(redistest.Start(b), "PING"))
	})
	// Output: PONG <nil>
}
