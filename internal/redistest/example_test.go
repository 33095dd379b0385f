package redistest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/internal/redistest"
)

// TestStart: the server answers at the address, and keeps what it is told.
func TestStart(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("get = %q, %v", v, err)
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
		c := redis.NewClient(&redis.Options{Addr: redistest.Start(b)})
		defer c.Close()
		fmt.Println(c.Ping(context.Background()).Val())
	})
	// Output: PONG
}
