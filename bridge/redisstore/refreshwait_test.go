package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// TestRefreshWaitEndsAtTheCallsDeadline: a user's grant is due for a refresh while another
// replica (a Store of its own on the same Redis) holds the grant's lock and never releases
// it, as a replica that crashed mid-refresh would. A call with a 2 s deadline gives up at
// its deadline with a *auth.RefreshWaitError naming the server, the user and the lock (and
// wrapping ErrTokenStore: retry later), long before the lock expires or the refresh's own
// bound ends; once the lock is free, the next call refreshes and works.
func TestRefreshWaitEndsAtTheCallsDeadline(t *testing.T) {
	c := startRedis(t)
	store := newStore(t, c, "k1")
	as, wrong := usersServer(t)
	// Every access token is due for a refresh as soon as it is issued (it expires within
	// the 10 s a token is refreshed before its expiry), yet the server takes it.
	as.SetTTL(5 * time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set := connectUsers(t, ctx, store, as.URL())
	const u = "frank"
	call := func(d time.Duration) error {
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
		cctx, ccancel := context.WithTimeout(bridge.WithUser(ctx, u), d)
		defer ccancel()
		_, err := set.Tools()[0].Handler(cctx, args)
		return err
	}
	logIn(t, ctx, set, u)
	if err := call(20 * time.Second); err != nil {
		t.Fatalf("after the login: %v", err)
	}

	// The crashed replica's lock: the user's grant is the one token key in Redis.
	keys, err := c.Keys(ctx, "mcpbridge:t:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("token keys: %q %v", keys, err)
	}
	const lockTTL = 60 * time.Second // the bridge's own (auth's lockTTL)
	other := newStore(t, c, "k1")
	if _, err := other.LockToken(ctx, strings.TrimPrefix(keys[0], "mcpbridge:t:"), lockTTL); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()

	err = call(2 * time.Second)
	returned := time.Since(locked)
	var rw *auth.RefreshWaitError
	if !errors.As(err, &rw) || rw.Server != "svc" || rw.User != u || rw.Phase != auth.PhaseRefreshLock {
		t.Fatalf("call while another replica holds the lock: %v (after %s; want a *auth.RefreshWaitError for svc, %s, waiting for the lock)", err, returned, u)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, bridge.ErrTokenStore) || errors.Is(err, bridge.ErrNeedsLogin) {
		t.Errorf("call while another replica holds the lock: %v (want DeadlineExceeded and ErrTokenStore, not ErrNeedsLogin)", err)
	}
	// Before the lock expired, and before the refresh's own bound (30 s) ended.
	if returned >= lockTTL/2 {
		t.Errorf("the call returned %s after the lock was taken: it waited for the refresh, not its deadline", returned)
	}

	// The lock is released (the replica's TTL would do it): the next call refreshes.
	if _, err := c.Del(ctx, "mcpbridge:l:"+strings.TrimPrefix(keys[0], "mcpbridge:t:")).Result(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a call to work once the lock is free", func() bool { return call(20*time.Second) == nil })
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
}
