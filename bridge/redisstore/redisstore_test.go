package redisstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/redisstore"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
	"github.com/ttalk/mcpbridge/internal/redistest"
)

// goRedisLog is what go-redis logs through its process-wide logger (dial failures, for
// the tests of a store that is down). TestMain installs it with redis.SetLogger before any
// test runs, as a host would at its start: this test binary is the host here (the package
// itself never sets it, see its doc), no go-redis goroutine runs yet, so setting the global
// races with nothing, and the tests check what was logged instead of cluttering their
// output with it.
var goRedisLog logBuffer

func TestMain(m *testing.M) {
	redis.SetLogger(&goRedisLog)
	os.Exit(m.Run())
}

// logBuffer is a go-redis logger that keeps the lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Printf(_ context.Context, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", v...)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startRedis runs redis-server (internal/redistest) with args until the test ends and
// returns a client of it.
func startRedis(t testing.TB, args ...string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.Start(t, args...)})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// pausableStore is a Store on a redis-server of its own whose commands give up after 300 ms
// (no client retries), so a test that pauses the server (CLIENT PAUSE at addr) sees the
// store fail fast.
func pausableStore(t *testing.T) (addr string, store *redisstore.Store) {
	t.Helper()
	addr = redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	store, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return addr, store
}

func newStore(t testing.TB, c redis.UniversalClient, current string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1), "k2": key(2)}, Current: current})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func grant(access, refresh string) *bridge.StoredToken {
	return &bridge.StoredToken{Server: "svc", ClientID: "c", TokenURL: "http://127.0.0.1/token",
		Token: &oauth2.Token{AccessToken: access, RefreshToken: refresh, Expiry: time.Now().Add(time.Hour)}}
}

func TestEncryptedAtRestAndRotation(t *testing.T) {
	c := startRedis(t)
	ctx := context.Background()
	s1 := newStore(t, c, "k1")
	if err := s1.SaveToken(ctx, "a", grant("ACCESS-SECRET", "REFRESH-SECRET")); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Get(ctx, "mcpbridge:t:a").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "SECRET") || !strings.HasPrefix(raw, "1.k1.") {
		t.Fatalf("stored value is not sealed with k1: %q", raw)
	}
	// Rotation: k2 current, k1 still readable; new writes use k2.
	s2 := newStore(t, c, "k2")
	g, err := s2.LoadToken(ctx, "a")
	if err != nil || g == nil || g.Token.AccessToken != "ACCESS-SECRET" {
		t.Fatalf("read with the old key: %+v, %v", g, err)
	}
	if err := s2.SaveToken(ctx, "a", g); err != nil {
		t.Fatal(err)
	}
	if raw, _ := c.Get(ctx, "mcpbridge:t:a").Result(); !strings.HasPrefix(raw, "1.k2.") {
		t.Fatalf("rewritten value not sealed with k2: %q", raw)
	}
	// A store that lost k2 cannot read it, and says which key without the token.
	only1, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := only1.LoadToken(ctx, "a"); err == nil || !strings.Contains(err.Error(), `"k2"`) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("unknown key: %v", err)
	}
	// A value moved under another key (another user's) does not decrypt.
	raw, _ = c.Get(ctx, "mcpbridge:t:a").Result()
	c.Set(ctx, "mcpbridge:t:b", raw, 0)
	if _, err := s2.LoadToken(ctx, "b"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("moved value: %v", err)
	}
	// Garbage is refused, bounded and explained.
	for _, v := range []string{"", "x", "1.k2.!!!", "1.k2." + strings.Repeat("A", 10), "2.k1.AAAA", strings.Repeat("1", 2<<20)} {
		c.Set(ctx, "mcpbridge:t:g", v, 0)
		if _, err := s2.LoadToken(ctx, "g"); err == nil {
			t.Errorf("value %.20q accepted", v)
		}
	}
	if g, err := s2.LoadToken(ctx, "missing"); g != nil || err != nil {
		t.Errorf("missing key: %v, %v", g, err)
	}
	if err := s2.DeleteToken(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if g, _ := s2.LoadToken(ctx, "a"); g != nil {
		t.Error("deleted grant still there")
	}
}

func TestNewChecksKeys(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, o := range []redisstore.Options{
		{Keys: map[string][]byte{"k": key(1)}, Current: "k"},
		{Client: c, Keys: map[string][]byte{"k": key(1)[:16]}, Current: "k"},
		{Client: c, Keys: map[string][]byte{"k": key(1)}, Current: "other"},
		{Client: c, Keys: map[string][]byte{"a.b": key(1)}, Current: "a.b"},
	} {
		if _, err := redisstore.New(o); err == nil {
			t.Errorf("%+v accepted", o.Current)
		}
	}
}

func TestLockIsExclusiveAndExpires(t *testing.T) {
	c := startRedis(t)
	s := newStore(t, c, "k1")
	ctx := context.Background()
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock, err := s.LockToken(ctx, "x", 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			in.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d holders at once", most.Load())
	}
	// A holder that never unlocks: the lock expires.
	if _, err := s.LockToken(ctx, "y", 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	unlock, err := s.LockToken(wctx, "y", time.Second)
	if err != nil {
		t.Fatalf("the abandoned lock did not expire: %v", err)
	}
	unlock()
	// A held lock and an ending ctx: the wait ends with it.
	if _, err := s.LockToken(ctx, "z", time.Minute); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := s.LockToken(short, "z", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting on a held lock: %v", err)
	}
}

func TestStoreDownIsBoundedAndSaysNoToken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A "server" that accepts and never answers: slow. And a closed port: down.
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	// And a Redis that wants another password than the one the client has.
	locked := startRedis(t, "--requirepass", "the-right-password")
	lockedAddr := locked.Options().Addr
	secrets := []string{"ACCESS-SECRET", "REFRESH-SECRET", "PASSWORD-SECRET", "CODE-SECRET", "STATE-SECRET", loginID("STATE-SECRET")}
	callback := url.Values{"code": {"CODE-SECRET"}, "state": {"STATE-SECRET"}}
	for _, addr := range []string{l.Addr().String(), "127.0.0.1:1", lockedAddr} {
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Password: "PASSWORD-SECRET", ContextTimeoutEnabled: true})
		s, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1", Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		// The caller's ctx allows a minute: the store's own bounds must end each wait.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, op := range []struct {
			name string
			f    func() error
		}{
			{"load", func() error { _, err := s.LoadToken(ctx, "a"); return err }},
			{"save", func() error { return s.SaveToken(ctx, "a", grant("ACCESS-SECRET", "REFRESH-SECRET")) }},
			{"delete", func() error { return s.DeleteToken(ctx, "a") }},
			{"lock", func() error { _, err := s.LockToken(ctx, "a", time.Minute); return err }},
			{"login relay", func() error {
				_, err := s.HoldLogin(ctx, loginID("STATE-SECRET"), time.Minute, func(context.Context, string, url.Values) error { return nil })
				return err
			}},
			{"login relay", func() error { return s.RelayLogin(ctx, loginID("STATE-SECRET"), "user", callback) }},
		} {
			t0 := time.Now()
			err := op.f()
			if d := time.Since(t0); d > 2*time.Second {
				t.Errorf("%s: %s took %s", addr, op.name, d)
			}
			if err == nil || !strings.HasPrefix(err.Error(), "redis token store: "+op.name) {
				t.Errorf("%s: %s: %v", addr, op.name, err)
				continue
			}
			for _, sec := range secrets {
				if strings.Contains(err.Error(), sec) {
					t.Errorf("%s: %s: the error holds a secret: %v", addr, op.name, err)
				}
			}
		}
		cancel()
		c.Close()
	}
	// What go-redis logged meanwhile (dial failures) holds no secret either.
	for _, sec := range secrets {
		if strings.Contains(goRedisLog.String(), sec) {
			t.Errorf("go-redis logged a secret:\n%s", goRedisLog.String())
		}
	}
	// Without ContextTimeoutEnabled go-redis's own timeouts (3 s) bound a silent server.
	c := redis.NewClient(&redis.Options{Addr: l.Addr().String(), MaxRetries: -1})
	defer c.Close()
	s, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := s.LoadToken(context.Background(), "a"); err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("silent server, default client: %v", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("silent server, default client: load took %s", d)
	}
}

// TestTwoReplicasNeverDoubleSpend: two Sets (two replicas) share the store; every user's
// access token expires at once and both replicas call for every user concurrently. Each
// rotating refresh token is spent once; every request carries its own user's token.
func TestTwoReplicasNeverDoubleSpend(t *testing.T) {
	c := startRedis(t)
	store := newStore(t, c, "k1")
	as, wrong := usersServer(t) // closed after the replicas (cleanups run in reverse)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	replica := func() *bridge.Set {
		set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
			&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler), Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", RefreshJitter: -1}})
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("connect: %v %v", err, set.Failed())
		}
		t.Cleanup(func() { _ = set.Close() })
		return set
	}
	a, b := replica(), replica()
	users := []string{"u1", "u2", "u3", "u4"}
	for _, u := range users {
		logIn(t, ctx, a, u)
	}
	call := func(set *bridge.Set, u string) error {
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
		out, err := set.Tools()[0].Handler(bridge.WithUser(ctx, u), args)
		if err == nil && out != hex.EncodeToString([]byte(u)) {
			err = fmt.Errorf("answered %q", out)
		}
		return err
	}
	for round := range 3 {
		as.ExpireAll()
		var wg sync.WaitGroup
		for _, u := range users {
			for _, set := range []*bridge.Set{a, b, a, b} {
				wg.Go(func() {
					if err := call(set, u); err != nil {
						t.Errorf("round %d, user %s: %v", round, u, err)
					}
				})
			}
		}
		wg.Wait()
	}
	if n := as.DoubleSpent(); n != 0 {
		t.Errorf("%d refresh tokens were spent twice", n)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
	if n := as.Count("refresh_token"); n < len(users) || n > 3*len(users) {
		t.Errorf("%d refreshes for %d users over 3 expiries", n, len(users))
	}
}

// TestLoginOnAnyReplica: a login started on replica A completes through a callback that
// reached replica B (each with a Store of its own on the same Redis); the user's next call
// works on both. Callbacks for an unknown or spent state, for another user, refused by the
// person, or for a replica that is gone fail promptly, saying so without the state or code.
func TestLoginOnAnyReplica(t *testing.T) {
	c := startRedis(t)
	as, wrong := usersServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	replica := func(timeout time.Duration) *bridge.Set {
		set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
			&bridge.Options{TokenStore: newStore(t, c, "k1"), Logger: slog.New(slog.DiscardHandler),
				Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", LoginTimeout: timeout}})
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("connect: %v %v", err, set.Failed())
		}
		t.Cleanup(func() { _ = set.Close() })
		return set
	}
	a, b := replica(time.Minute), replica(time.Minute)
	call := func(set *bridge.Set, u string) error {
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
		_, err := set.Tools()[0].Handler(bridge.WithUser(ctx, u), args)
		return err
	}
	secretFree := func(what string, err error, q url.Values) {
		t.Helper()
		for _, s := range []string{q.Get("state"), q.Get("code"), loginID(q.Get("state"))} {
			if s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error holds the state, code or login ID: %v", what, err)
			}
		}
	}

	const u = "odd \x00\xff user"
	if err := call(b, u); !errors.Is(err, bridge.ErrNeedsLogin) {
		t.Fatalf("before login: %v", err)
	}
	q := consent(t, ctx, a, u)
	keys, _ := c.Keys(ctx, "mcpbridge:lf:*").Result()
	if len(keys) != 1 {
		t.Fatalf("login records: %q", keys)
	}
	if ttl := c.PTTL(ctx, keys[0]).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the login record expires in %s, want within the login timeout (1m)", ttl)
	}
	if err := b.CompleteLogin(ctx, u, q); err != nil {
		t.Fatalf("callback on the other replica: %v", err)
	}
	for name, set := range map[string]*bridge.Set{"A": a, "B": b} {
		if err := call(set, u); err != nil {
			t.Errorf("call on %s after the login: %v", name, err)
		}
	}
	// The same callback again, on either replica: the login is spent.
	for name, set := range map[string]*bridge.Set{"A": a, "B": b} {
		err := set.CompleteLogin(ctx, u, q)
		if !errors.Is(err, bridge.ErrLoginUnknown) {
			t.Errorf("second callback on %s: %v", name, err)
		} else {
			secretFree("second callback", err, q)
		}
	}
	if n := len(c.Keys(ctx, "mcpbridge:lf:*").Val()); n != 0 {
		t.Errorf("%d login records left after the login", n)
	}

	// A callback for another user than the login's ends that login.
	q = consent(t, ctx, a, "alice")
	err := b.CompleteLogin(ctx, "mallory", q)
	if err == nil || errors.Is(err, bridge.ErrLoginUnknown) || !strings.Contains(err.Error(), "another user") {
		t.Errorf("callback for another user: %v", err)
	} else {
		secretFree("another user", err, q)
	}
	if err := b.CompleteLogin(ctx, "alice", q); !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("after a callback for another user: %v", err)
	}
	if err := call(a, "mallory"); !errors.Is(err, bridge.ErrNeedsLogin) {
		t.Errorf("mallory got a grant: %v", err)
	}

	// The wrong user's callback reaches the replica that holds the login, which ends it; the
	// owner's retry on the other replica, right after, is told at once that no login waits
	// (ErrLoginUnknown), whether it finds the login's record before the holder lets go of it
	// or after, never the relay timeout's "no outcome" (the relayed callback the holder's
	// closing subscription never reads). Five rounds: the interleavings differ.
	for i := range 5 {
		q = consent(t, ctx, a, "carol")
		if err := a.CompleteLogin(ctx, "mallory", q); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Fatalf("round %d: callback for another user on the holder: %v", i, err)
		}
		if err := b.CompleteLogin(ctx, "carol", q); !errors.Is(err, bridge.ErrLoginUnknown) {
			t.Errorf("round %d: the owner's retry after the holder ended the login: %v", i, err)
		}
	}
	waitFor(t, "no login records left", func() bool {
		return len(c.Keys(ctx, "mcpbridge:lf:*").Val())+len(c.Keys(ctx, "mcpbridge:lh:*").Val()) == 0
	})

	// The person refuses: the refusal comes back.
	as.Deny(true)
	q = consent(t, ctx, a, "bob")
	as.Deny(false)
	if err := b.CompleteLogin(ctx, "bob", q); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("refused login: %v", err)
	}

	// Never started.
	err = b.CompleteLogin(ctx, u, url.Values{"state": {"forged-state"}, "code": {"forged-code"}})
	if !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("forged state: %v", err)
	} else {
		secretFree("forged state", err, url.Values{"state": {"forged-state"}, "code": {"forged-code"}})
	}

	// The replica that started the login is gone: the other says so at once.
	gone := replica(time.Minute)
	q = consent(t, ctx, gone, "carol")
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := b.CompleteLogin(ctx, "carol", q); !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("login of a closed replica: %v", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the callback for a closed replica took %s", d)
	}

	// A replica that died holding a login (its record is left): no one listens.
	state := url.Values{"state": {"state-of-a-dead-replica"}, "code": {"code-of-a-dead-replica"}}
	c.Set(ctx, "mcpbridge:lf:"+loginID(state.Get("state")), "mcpbridge:login:nobody", time.Minute)
	if err := b.CompleteLogin(ctx, "erin", state); !errors.Is(err, bridge.ErrLoginUnknown) || !strings.Contains(err.Error(), "gone") {
		t.Errorf("login of a dead replica: %v", err)
	}
	// A replica that listens and never answers: the wait is bounded by RelayTimeout.
	ps := c.Subscribe(ctx, "mcpbridge:login:stalled")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	state.Set("state", "state-of-a-stalled-replica")
	c.Set(ctx, "mcpbridge:lf:"+loginID(state.Get("state")), "mcpbridge:login:stalled", time.Minute)
	impatient, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1", RelayTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if err := impatient.RelayLogin(ctx, loginID(state.Get("state")), "erin", state); err == nil || !strings.Contains(err.Error(), "no outcome") {
		t.Errorf("stalled replica: %v", err)
	} else {
		secretFree("stalled replica", err, state)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("waiting on a stalled replica took %s", d)
	}

	// A login past its timeout is unknown everywhere.
	short := replica(time.Second)
	q = consent(t, ctx, short, "dave")
	deadline := time.Now().Add(30 * time.Second)
	for len(c.Keys(ctx, "mcpbridge:lf:*").Val()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the login record outlived the login timeout")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.CompleteLogin(ctx, "dave", q); !errors.Is(err, bridge.ErrLoginUnknown) {
		t.Errorf("expired login: %v", err)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
}

// usersServer starts the local OAuth server in front of a go-sdk server whose tool counts
// in wrong every request that carries another user's token; listing needs no token.
func usersServer(t *testing.T) (*oauthtest.Server, *atomic.Int64) {
	t.Helper()
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.New(srv)
	t.Cleanup(as.Close)
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	return as, &wrong
}

// consent starts user u's login to server "svc" of set and returns the callback's query
// that oauthtest's consent page gives.
func consent(t *testing.T, ctx context.Context, set *bridge.Set, u string) url.Values {
	t.Helper()
	au, err := set.StartLogin(ctx, u, "svc")
	if err != nil {
		t.Fatal(err)
	}
	q, err := oauthtest.Consent(ctx, au, u)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// logIn logs user u in to server "svc" of set through oauthtest's consent page.
func logIn(t *testing.T, ctx context.Context, set *bridge.Set, u string) {
	t.Helper()
	if err := set.CompleteLogin(ctx, u, consent(t, ctx, set, u)); err != nil {
		t.Fatal(err)
	}
}

// connectUsers connects a Set for many users, its grants in store, to the one OAuth server
// at url ("svc"), and fails the test unless the server is up.
func connectUsers(t *testing.T, ctx context.Context, store bridge.TokenStore, url string) *bridge.Set {
	t.Helper()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: url, Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler),
			Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", RefreshJitter: -1}})
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	t.Cleanup(func() { _ = set.Close() })
	return set
}

// loginID is bridge's hash of a login's state (what the relay sees).
func loginID(state string) string {
	sum := sha256.Sum256([]byte("mcpbridge login\x00" + state))
	return hex.EncodeToString(sum[:])
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A server that refuses the user's token while the shared store is down: the call fails with
// a store error (bridge.ErrTokenStore), not ErrNeedsLogin, since the grant may be fine and a
// login could not be stored either; once the store is back and the grant refreshed, the
// same user's call works again without a login.
func TestStoreDownIsNotNeedsLogin(t *testing.T) {
	addr, store := pausableStore(t)
	as, wrong := usersServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set := connectUsers(t, ctx, store, as.URL())
	const u = "dana"
	call := func() error {
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
		cctx, ccancel := context.WithTimeout(bridge.WithUser(ctx, u), 20*time.Second)
		defer ccancel()
		_, err := set.Tools()[0].Handler(cctx, args)
		return err
	}
	logIn(t, ctx, set, u)
	if err := call(); err != nil {
		t.Fatalf("after the login: %v", err)
	}

	// The server forgets the access token (as its expiry would) while Redis answers nobody
	// for 5 s (the store's timeout is 300 ms).
	as.ExpireAll()
	if r, err := redistest.Do(addr, "CLIENT", "PAUSE", "5000", "ALL"); err != nil || r != "OK" {
		t.Fatalf("pausing redis: %q %v", r, err)
	}
	err := call()
	if errors.Is(err, bridge.ErrNeedsLogin) || !errors.Is(err, bridge.ErrTokenStore) {
		t.Fatalf("call while the store is down: %v (want ErrTokenStore, not ErrNeedsLogin)", err)
	}
	waitFor(t, "a call to work again without a login", func() bool { return call() == nil })
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
}

// failingSave is a store whose next SaveToken, once armed, meets a real outage: the
// redis-server is killed just before the save goes to it, and started again (its data
// kept) after the save failed.
type failingSave struct {
	*redisstore.Store
	srv   *redistest.Server
	armed atomic.Bool
	hit   atomic.Int64
}

func (f *failingSave) SaveToken(ctx context.Context, k string, t *bridge.StoredToken) error {
	if !f.armed.CompareAndSwap(true, false) {
		return f.Store.SaveToken(ctx, k, t)
	}
	f.srv.Kill()
	err := f.Store.SaveToken(ctx, k, t)
	if rerr := f.srv.Restart(); rerr != nil {
		return errors.Join(err, rerr)
	}
	if err != nil {
		f.hit.Add(1)
	}
	return err
}

// TestUnsavedRefreshIsKept: a refresh whose save meets a store outage (the refresh token it
// spent is what the store still holds) keeps the refreshed grant: the next refresh, after
// the server refused the access token again, uses it and saves it, instead of spending the
// store's refresh token a second time (refused: the user would be sent to a login although
// the grant is fine). A process that starts afterwards finds the grant in the store.
func TestUnsavedRefreshIsKept(t *testing.T) {
	srv := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	rs, err := redisstore.New(redisstore.Options{Client: c, Keys: map[string][]byte{"k1": key(1)}, Current: "k1", Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	store := &failingSave{Store: rs, srv: srv}
	as, wrong := usersServer(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set := connectUsers(t, ctx, store, as.URL())
	const u = "erin"
	call := func(set *bridge.Set) error {
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
		cctx, ccancel := context.WithTimeout(bridge.WithUser(ctx, u), 20*time.Second)
		defer ccancel()
		_, err := set.Tools()[0].Handler(cctx, args)
		return err
	}
	logIn(t, ctx, set, u)
	if err := call(set); err != nil {
		t.Fatalf("after the login: %v", err)
	}

	// The server refuses the access token; its refresh is not saved (the store is down).
	as.ExpireAll()
	store.armed.Store(true)
	if err := call(set); err != nil {
		t.Fatalf("the call whose refresh was not saved: %v", err)
	}
	if store.hit.Load() != 1 {
		t.Fatalf("%d saves met the outage, want 1", store.hit.Load())
	}
	// Again: the refresh must start from the grant this process holds.
	as.ExpireAll()
	if err := call(set); err != nil {
		t.Errorf("the next refresh: %v", err)
	}
	if d := as.DoubleSpent(); d != 0 {
		t.Errorf("%d refresh tokens were spent twice", d)
	}
	// A new process (another replica, a restart) reads the grant from the store.
	as.ExpireAll()
	if err := call(connectUsers(t, ctx, store, as.URL())); err != nil {
		t.Errorf("a new process's call: %v", err)
	}
	if d := as.DoubleSpent(); d != 0 {
		t.Errorf("%d refresh tokens were spent twice", d)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
}

// TestOrphanedLockIsTakenBack: a lock whose release met a store outage stays in Redis
// until its TTL ends (the server keeps its data across the restart); the Store that held it
// takes it back at once, and another replica's Store still waits for it.
func TestOrphanedLockIsTakenBack(t *testing.T) {
	srv := redistest.StartServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	s := newStore(t, c, "k1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unlock, err := s.LockToken(ctx, "g", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	unlock() // fails: the server is down
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if ttl, err := redistest.Do(srv.Addr(), "PTTL", "mcpbridge:l:g"); err != nil || ttl == "-2" {
		t.Fatalf("the lock did not survive the restart: %q %v", ttl, err)
	}
	other := newStore(t, c, "k1")
	short, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	if _, err := other.LockToken(short, "g", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another Store took the orphaned lock: %v", err)
	}
	short2, scancel2 := context.WithTimeout(ctx, 2*time.Second)
	defer scancel2()
	unlock, err = s.LockToken(short2, "g", time.Minute)
	if err != nil {
		t.Fatalf("the Store that left the lock behind cannot take it back: %v", err)
	}
	unlock()
	if _, err := other.LockToken(short2, "g", time.Minute); err != nil {
		t.Fatalf("the lock was not released: %v", err)
	}
}
