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

// Start is called from a test; here with a testing.TB of our own making it would skip, so
// the example only shows the shape of a use.
func Example() {
	use := func(t testing.TB) {
		c := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
		defer c.Close()
		fmt.Println(c.Ping(context.Background()).Val())
	}
	_ = use
	fmt.Println("redistest.Start(t) returns the address of a fresh redis-server")
	// Output: redistest.Start(t) returns the address of a fresh redis-server
}
