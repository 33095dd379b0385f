package redisstore

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/internal/redistest"
)

// TestLockTakesAnOrphanMeanwhile: a caller waiting for a lock that another caller of the
// same Store then leaves behind (its answer lost in an outage: the lock is set, its holder
// returned an error) takes it over at its next poll, instead of waiting for the lock's TTL
// or its own ctx, whichever ends first.
func TestLockTakesAnOrphanMeanwhile(t *testing.T) {
	addr := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(Options{Client: c, Keys: map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)}, Current: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	const lk = "mcpbridge:l:g"
	if r, err := redistest.Do(addr, "SET", lk, "lost", "PX", "60000"); err != nil || r != "OK" {
		t.Fatalf("set: %q %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan error, 1)
	began := time.Now()
	go func() {
		unlock, err := s.LockToken(ctx, "g", time.Minute)
		if err == nil {
			unlock()
		}
		got <- err
	}()
	// Once the caller has polled (Redis counts its lock script), the orphan is recorded.
	for deadline := time.Now().Add(5 * time.Second); ; {
		info, err := c.Info(ctx, "commandstats").Result()
		if err == nil && (strings.Contains(info, "cmdstat_eval:") || strings.Contains(info, "cmdstat_evalsha:")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("LockToken never polled: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // polling until the deadline
	}
	s.orphans.keep(lk, "lost", time.Minute)
	if err := <-got; err != nil {
		t.Fatalf("LockToken: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took the orphaned lock after %s", d)
	}
	if v, err := redistest.Do(addr, "GET", lk); err != nil || v != "" {
		t.Errorf("the lock is still held: %q %v", v, err)
	}
}

// TestLockRetriedSetFindsItsToken: a lock command sent again with the same holder token
// (go-redis retries a command whose answer was lost, after Redis had run it) takes the
// lock it already holds; another token does not.
func TestLockRetriedSetFindsItsToken(t *testing.T) {
	addr := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	s, err := New(Options{Client: c, Keys: map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)}, Current: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, tc := range []struct {
		holder string
		want   bool
	}{{"h1", true}, {"h1", true}, {"h2", false}} {
		if ok, err := s.tryLock(ctx, "mcpbridge:l:x", tc.holder, time.Minute); err != nil || ok != tc.want {
			t.Fatalf("attempt %d by %s = %v, %v; want %v", i, tc.holder, ok, err, tc.want)
		}
	}
}
