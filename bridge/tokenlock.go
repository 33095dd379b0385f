package bridge

import (
	"context"
	"time"

	"github.com/ttalk/mcpbridge/internal/oauth"
)

// TokenLocker is a TokenStore shared by several processes (replicas of a web host) that can
// lock one key across all of them. With one, the bridge refreshes a grant only while it
// holds the grant's lock, after reading the grant again, so that two replicas never both
// spend a refresh token the authorization server rotates (the second would be refused, or
// worse, revoke the grant); grants are also refreshed proactively with jitter
// (UserOptions.RefreshJitter). bridge/redisstore is one.
type TokenLocker interface {
	TokenStore
	// LockToken waits until it holds the lock on key or ctx ends; the lock expires after
	// ttl if it is never released. unlock releases it, only if it is still held.
	LockToken(ctx context.Context, key string, ttl time.Duration) (unlock func(), err error)
}

// adaptStore is store as internal/oauth sees it: a Locker when store is a TokenLocker.
func adaptStore(store TokenStore) oauth.Store {
	if l, ok := store.(TokenLocker); ok {
		return lockingStore{grantStore{store}, l}
	}
	return grantStore{store}
}

type lockingStore struct {
	grantStore
	l TokenLocker
}

func (s lockingStore) LockToken(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	return s.l.LockToken(ctx, key, ttl)
}

func (o *UserOptions) refreshJitter() time.Duration {
	switch {
	case o == nil || o.RefreshJitter < 0:
		return 0
	case o.RefreshJitter == 0:
		return DefaultRefreshJitter
	}
	return o.RefreshJitter
}
