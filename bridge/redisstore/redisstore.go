// Package redisstore is a auth.TokenStore on Redis, shared by the replicas of a web host:
// tokens encrypted at rest, a lock per grant so that a refresh is single-flight across
// replicas (auth.TokenLocker), a relay that brings a login's callback to the replica
// whose flow waits for it (auth.LoginRelay), bounded waits on a store that is down or
// slow.
//
// It is its own package so that a program that keeps its tokens elsewhere does not link a
// Redis client. Values are sealed with AES-256-GCM under a key the host gives (from its
// secret manager, never from the store), with the Redis key as additional data: a value
// copied under another user's or server's key does not decrypt. Keys have IDs; a value
// records the ID it was sealed with, so rotating is adding a new key as Current while the
// old ones stay in Keys until every grant was saved again (a grant is saved at each
// refresh and login). Errors name the operation and the key ID, never a token.
//
// A Store's Redis keys are <Prefix>t:<key> for grants and <Prefix>l:<key> for locks; the
// bridge's keys are hashes, so Redis never holds a user ID or a server URL in the clear.
// The login relay adds <Prefix>lf:<login ID> (which replica holds a login, for its
// timeout), a channel <Prefix>login:<random> per Store while one of its logins waits, and
// reply lists <Prefix>lr:<random> that live a minute at most; what it relays (the user and
// the callback's code and state) is sealed like a grant.
//
// Logging: the Store logs nothing. go-redis itself writes some failures (a dial that
// failed after its retries, a pool or pub/sub problem) to its own logger, which is
// process-wide (redis.SetLogger; by default the standard error), so this package leaves it
// alone: a host that wants those lines in its own log calls redis.SetLogger once at start
// (for example with an adapter to its *slog.Logger). go-redis's messages carry addresses
// and Redis errors, never a value: grants reach Redis sealed.
package redisstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// DefaultTimeout bounds one store operation when Options.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// maxValue bounds a value read from Redis.
const maxValue = 1 << 20

// Options configure a Store.
type Options struct {
	// Client is the Redis connection (pool); the host owns and closes it.
	Client redis.UniversalClient
	// Prefix is put before every Redis key (default "mcpbridge:").
	Prefix string
	// Keys are the AES-256 keys (32 bytes each) by ID; Current is the ID new values are
	// sealed with. Values sealed with any key in Keys can be read.
	Keys    map[string][]byte
	Current string
	// Timeout bounds each operation (default DefaultTimeout), within the caller's ctx, as
	// its context's deadline. go-redis applies that deadline to a command's reads and
	// writes only when the client's redis.Options.ContextTimeoutEnabled is set; otherwise
	// its ReadTimeout and WriteTimeout (3 s by default) bound a command to a server that
	// does not answer, and Timeout bounds the waits between commands.
	Timeout time.Duration
	// RelayTimeout bounds a relayed login's wait for its outcome (default
	// DefaultRelayTimeout), within the caller's ctx (auth.LoginRelay).
	RelayTimeout time.Duration
}

// Store is a auth.TokenStore and auth.TokenLocker on Redis. Safe for concurrent use.
type Store struct {
	c       redis.UniversalClient
	prefix  string
	aead    map[string]cipher.AEAD
	current string
	timeout time.Duration

	relayTimeout time.Duration
	relay        relay
	orphans      orphans
}

var (
	_ auth.TokenLocker = (*Store)(nil)
	_ auth.LoginRelay  = (*Store)(nil)
)

// New checks opts and returns the store; it does not contact Redis.
func New(opts Options) (*Store, error) {
	if opts.Client == nil {
		return nil, errors.New("redis token store: no Client")
	}
	s := &Store{c: opts.Client, prefix: opts.Prefix, aead: map[string]cipher.AEAD{}, current: opts.Current, timeout: opts.Timeout}
	if s.prefix == "" {
		s.prefix = "mcpbridge:"
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.relayTimeout = opts.RelayTimeout; s.relayTimeout <= 0 {
		s.relayTimeout = DefaultRelayTimeout
	}
	for id, k := range opts.Keys {
		if id == "" || strings.ContainsAny(id, ".") || len(id) > 64 {
			return nil, fmt.Errorf("redis token store: key ID %q: want 1 to 64 bytes without '.'", id)
		}
		if len(k) != 32 {
			return nil, fmt.Errorf("redis token store: key %q: %d bytes, want 32 (AES-256)", id, len(k))
		}
		b, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("redis token store: key %q: %w", id, err)
		}
		g, err := cipher.NewGCM(b)
		if err != nil {
			return nil, fmt.Errorf("redis token store: key %q: %w", id, err)
		}
		s.aead[id] = g
	}
	if _, ok := s.aead[s.current]; !ok {
		return nil, fmt.Errorf("redis token store: the current key %q is not among Keys", s.current)
	}
	return s, nil
}

func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// fail explains a failed operation without the value: Redis errors carry none.
func fail(op string, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("redis token store: %s: no answer in time: %w", op, err)
	}
	return fmt.Errorf("redis token store: %s: %w", op, err)
}

// LoadToken implements auth.TokenStore.
func (s *Store) LoadToken(ctx context.Context, key string) (*auth.StoredToken, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rk := s.prefix + "t:" + key
	v, err := s.c.Get(ctx, rk).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fail("load", err)
	}
	plain, err := s.open("load", rk, v)
	if err != nil {
		return nil, err
	}
	var t auth.StoredToken
	if err := json.Unmarshal(plain, &t); err != nil {
		return nil, errors.New("redis token store: load: the decrypted value is not a grant")
	}
	return &t, nil
}

// SaveToken implements auth.TokenStore: the grant sealed with the current key.
func (s *Store) SaveToken(ctx context.Context, key string, t *auth.StoredToken) error {
	plain, err := json.Marshal(t)
	if err != nil {
		return fail("save", err)
	}
	rk := s.prefix + "t:" + key
	v := s.seal(rk, plain)
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if err := s.c.Set(ctx, rk, v, 0).Err(); err != nil {
		return fail("save", err)
	}
	return nil
}

// DeleteToken implements auth.TokenStore.
func (s *Store) DeleteToken(ctx context.Context, key string) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if err := s.c.Del(ctx, s.prefix+"t:"+key).Err(); err != nil {
		return fail("delete", err)
	}
	return nil
}

// unlockScript deletes the lock only if it still holds this holder's token.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// lockScript takes the lock when it is free or already held by this holder's token (a
// retried SET whose first answer was lost, or an orphan of this Store), for ARGV[2]
// milliseconds.
var lockScript = redis.NewScript(`local v = redis.call("GET", KEYS[1])
if v == false then redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2]) return 1 end
if v == ARGV[1] then redis.call("PEXPIRE", KEYS[1], ARGV[2]) return 1 end
return 0`)

// LockToken implements auth.TokenLocker with a random holder token set if the lock is free
// or already holds it (lockScript: a command go-redis retried after its answer was lost
// finds its own token), polling (10 ms to 200 ms, jittered) until it is or ctx ends; ctx
// alone bounds the wait. A lock this Store may have left behind in a store outage (its
// release failed, or the answer to taking it was lost) would block the grant's refreshes
// until its TTL ends; the Store remembers its token (orphans) and takes the lock back with
// it.
func (s *Store) LockToken(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	lk := s.prefix + "l:" + key
	holder, orphaned := s.orphans.take(lk)
	if !orphaned {
		holder = crand.Text()
	}
	wait := 10 * time.Millisecond
	for {
		if !orphaned {
			// Another caller of this Store may have left the lock behind meanwhile.
			if h, ok := s.orphans.take(lk); ok {
				holder, orphaned = h, true
			}
		}
		octx, cancel := s.bound(ctx)
		ok, err := s.tryLock(octx, lk, holder, ttl)
		cancel()
		if err != nil {
			s.orphans.keep(lk, holder, ttl) // the lock may have been taken
			return nil, fail("lock", err)
		}
		if ok {
			return func() {
				// Released on a context of its own: the caller's may have ended.
				uctx, cancel := context.WithTimeout(context.Background(), s.timeout)
				defer cancel()
				if err := unlockScript.Run(uctx, s.c, []string{lk}, holder).Err(); err != nil {
					s.orphans.keep(lk, holder, ttl)
				}
			}, nil
		}
		t := time.NewTimer(wait/2 + mrand(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fail("lock", fmt.Errorf("held by another replica: %w", ctx.Err()))
		case <-t.C:
		}
		wait = min(wait*2, 200*time.Millisecond)
	}
}

// tryLock takes the lock lk for holder if it is free or already holder's.
func (s *Store) tryLock(ctx context.Context, lk, holder string, ttl time.Duration) (bool, error) {
	n, err := lockScript.Run(ctx, s.c, []string{lk}, holder, ttl.Milliseconds()).Int64()
	return n == 1, err
}

func mrand(d time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(d))) }

// maxOrphans bounds the locks a Store remembers having left behind; over it, a lock is
// left to its TTL.
const maxOrphans = 4096

// orphans are the holder tokens of locks this Store may have left behind, by lock key,
// until their TTL ends.
type orphans struct {
	mu sync.Mutex
	m  map[string]orphan
}

type orphan struct {
	holder string
	until  time.Time
}

// keep remembers holder as lk's possible orphan for ttl.
func (o *orphans) keep(lk, holder string, ttl time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.m == nil {
		o.m = map[string]orphan{}
	}
	if len(o.m) >= maxOrphans {
		for k, v := range o.m {
			if now.After(v.until) {
				delete(o.m, k)
			}
		}
		if len(o.m) >= maxOrphans {
			return
		}
	}
	o.m[lk] = orphan{holder: holder, until: now.Add(ttl)}
}

// take returns and forgets lk's orphan, if its TTL has not ended.
func (o *orphans) take(lk string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[lk]
	delete(o.m, lk)
	return v.holder, ok && time.Now().Before(v.until)
}

// seal is "1.<key ID>.<base64url(nonce|ciphertext)>", with rk as additional data.
func (s *Store) seal(rk string, plain []byte) string {
	g := s.aead[s.current]
	nonce := make([]byte, g.NonceSize(), g.NonceSize()+len(plain)+g.Overhead())
	_, _ = crand.Read(nonce)
	ct := g.Seal(nonce, nonce, plain, []byte(rk))
	return "1." + s.current + "." + base64.RawURLEncoding.EncodeToString(ct)
}

// open is seal's inverse; op names the operation in its errors.
func (s *Store) open(op, rk, v string) ([]byte, error) {
	if len(v) > maxValue {
		return nil, fmt.Errorf("redis token store: %s: value of %d bytes (at most %d)", op, len(v), maxValue)
	}
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 || parts[0] != "1" {
		return nil, fmt.Errorf("redis token store: %s: not a sealed value", op)
	}
	g, ok := s.aead[parts[1]]
	if !ok {
		return nil, fmt.Errorf("redis token store: %s: sealed with key %q, which is not among Keys", op, redact.ClipMark(parts[1], 64, ""))
	}
	ct, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(ct) < g.NonceSize()+g.Overhead() {
		return nil, fmt.Errorf("redis token store: %s: not a sealed value", op)
	}
	plain, err := g.Open(nil, ct[:g.NonceSize()], ct[g.NonceSize():], []byte(rk))
	if err != nil {
		return nil, fmt.Errorf("redis token store: %s: the value does not decrypt with key %q (tampered, or moved from another key)", op, parts[1])
	}
	return plain, nil
}
