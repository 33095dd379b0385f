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
