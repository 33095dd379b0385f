package integration

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// memStore is an in-memory bridge.TokenLocker: the benchmark measures the bridge, not a
// database (bridge/redisstore's tests cover Redis).
type memStore struct {
	mu    sync.Mutex
	m     map[string]bridge.StoredToken
	locks map[string]chan struct{}
}

func (s *memStore) LoadToken(_ context.Context, k string) (*bridge.StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[k]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

func (s *memStore) SaveToken(_ context.Context, k string, t *bridge.StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = *t
	return nil
}

func (s *memStore) DeleteToken(_ context.Context, k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

func (s *memStore) LockToken(ctx context.Context, k string, _ time.Duration) (func(), error) {
	for {
		s.mu.Lock()
		ch, held := s.locks[k]
		if !held {
			ch = make(chan struct{})
			s.locks[k] = ch
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				delete(s.locks, k)
				s.mu.Unlock()
				close(ch)
			}, nil
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// BenchmarkUsers: N simulated users (MCPBRIDGE_BENCH_USERS, default 1000) of one bridge
// call whoami on a local OAuth-protected Streamable HTTP server that checks every request's
// token against the user it is for: "stateful", a server that keeps sessions (go-sdk's
// default handler; protocol 2025-11-25), where each user has a session of their own, and
// "stateless" (2026-07-28), where a user's calls go on the shared connection with the
// user's token and the bridge keeps only the user's OAuth handler. Reported: heap per idle
// user (each user logged in and called once; client and server share the process, so the
// server's per-session state is included), p50/p99 call latency, and cross-user token
// uses (must be 0). "stateless-grant" is the stateless server answering nothing without a
// user's grant, not even server/discover: it has no shared session, and the users' calls go
// on one connection (opened with the first user's grant) with each user's token.
func BenchmarkUsers(b *testing.B) {
	for _, kind := range []string{"stateful", "stateless", "stateless-grant"} {
		b.Run(kind, func(b *testing.B) { benchUsers(b, kind) })
	}
}

func benchUsers(b *testing.B, kind string) {
	stateless := kind != "stateful"
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MCPBRIDGE_BENCH_USERS")); err == nil && v > 0 {
		n = v
	}
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: stateless})
	b.Cleanup(as.Close)
	if kind != "stateless-grant" {
		as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	}

	ctx := context.Background()
	store := &memStore{m: map[string]bridge.StoredToken{}, locks: map[string]chan struct{}{}}
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler), Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", MaxSessions: n}})
	if err != nil || len(set.Failed()) > 0 {
		b.Fatalf("connect: %v %v", err, set.Failed())
	}
	b.Cleanup(func() { _ = set.Close() })
	var (
		toolMu sync.Mutex
		tools  = set.Tools() // none for stateless-grant: ToolsFor of the first user who has a grant
	)
	toolOf := func(user string) (bridge.Tool, error) {
		toolMu.Lock()
		defer toolMu.Unlock()
		if len(tools) == 0 {
			var err error
			if tools, err = set.ToolsFor(bridge.WithUser(ctx, user)); err != nil || len(tools) == 0 {
				return bridge.Tool{}, fmt.Errorf("user %s: ToolsFor: %d tools, %v", user, len(tools), err)
			}
		}
		return tools[0], nil
	}
	users := make([]string, n)
	args := make([]json.RawMessage, n)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i)
		args[i], _ = json.Marshal(map[string]string{"user": oauthtest.UserArg(users[i])})
	}
	call := func(i int) error {
		tool, err := toolOf(users[i])
		if err != nil {
			return err
		}
		out, err := tool.Handler(bridge.WithUser(ctx, users[i]), args[i])
		if err == nil && out != hex.EncodeToString([]byte(users[i])) {
			err = fmt.Errorf("user %s: answered %q", users[i], out)
		}
		return err
	}
	// Every user logs in (a web login each) and calls once, so that each has a session.
	work := func(f func(i int) error) {
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range 16 {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					if err := f(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	work(func(i int) error {
		u, err := set.StartLogin(ctx, users[i], "svc")
		if err != nil {
			return err
		}
		q, err := oauthtest.Consent(ctx, u, users[i])
		if err != nil {
			return err
		}
		if err := set.CompleteLogin(ctx, users[i], q); err != nil {
			return err
		}
		return call(i)
	})
	if b.Failed() {
		return
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	want := n // a session per user
	if stateless {
		want = 0 // the shared connection
	}
	if got := set.Servers()[0].UserSessions(); got != want {
		b.Fatalf("%d user sessions, want %d", got, want)
	}

	lat := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	var seq atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			i := int(seq.Add(1)) % n
			start := time.Now()
			if err := call(i); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(n), "heap-B/idle-user")
	b.ReportMetric(float64(n), "users")
	b.ReportMetric(float64(wrong.Load()), "cross-user")
	if wrong.Load() != 0 {
		b.Fatalf("%d requests carried another user's token", wrong.Load())
	}
}

// refreshMargin is how long before its expiry the bridge refreshes an access token when
// there is no jitter (bridge/auth's expiryDelta, as golang.org/x/oauth2 does).
const refreshMargin = 10 * time.Second

// BenchmarkUsersExpiry: N users (MCPBRIDGE_BENCH_USERS, default 1000) whose grants all
// expire at the same instant keep calling whoami through a replica that has just loaded
// them from a shared store (a TokenLocker, so refreshes are proactive and jittered): the
// refresh storm, with no jitter (UserOptions.RefreshJitter < 0) and with the default
// (1 min). Reported per case: refreshes in the measured window (which opens when the first
// grant may be refreshed), their mean rate over it and their peak rate (the busiest second,
// per minute), and cross-user token uses (must be 0). Each case is one measurement, whatever
// b.N; together they take about 20 s.
func BenchmarkUsersExpiry(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("MCPBRIDGE_BENCH_USERS")); err == nil && v > 0 {
		n = v
	}
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.New(srv)
	b.Cleanup(as.Close)
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	store := &memStore{m: map[string]bridge.StoredToken{}, locks: map[string]chan struct{}{}}
	ctx := context.Background()
	users := make([]string, n)
	args := make([]json.RawMessage, n)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i)
		args[i], _ = json.Marshal(map[string]string{"user": oauthtest.UserArg(users[i])})
	}
	replica := func(jitter time.Duration) *bridge.Set {
		set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
			&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler),
				Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", MaxSessions: n, RefreshJitter: jitter}})
		if err != nil || len(set.Failed()) > 0 {
			b.Fatalf("connect: %v %v", err, set.Failed())
		}
		return set
	}
	// parallel runs f for every user, 16 at a time, until all are done or stop is closed.
	parallel := func(f func(i int) error, stop <-chan struct{}) {
		var wg sync.WaitGroup
		next := atomic.Int64{}
		for range 16 {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if stop == nil && i >= n {
						return
					}
					select {
					case <-stop:
						return
					default:
					}
					if err := f(i % n); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	call := func(set *bridge.Set, i int) error {
		out, err := set.Tools()[0].Handler(bridge.WithUser(ctx, users[i]), args[i])
		if err == nil && out != oauthtest.UserArg(users[i]) {
			err = fmt.Errorf("user %s: answered %q", users[i], out)
		}
		return err
	}

	// Every user logs in through a replica that then goes away.
	login := replica(-1)
	parallel(func(i int) error {
		u, err := login.StartLogin(ctx, users[i], "svc")
		if err != nil {
			return err
		}
		q, err := oauthtest.Consent(ctx, u, users[i])
		if err != nil {
			return err
		}
		return login.CompleteLogin(ctx, users[i], q)
	}, nil)
	_ = login.Close()
	if b.Failed() {
		return
	}

	for _, c := range []struct {
		name   string
		jitter time.Duration // UserOptions.RefreshJitter
		spread time.Duration // what it spreads refreshes over
		window time.Duration
	}{
		{"jitter=none", -1, 0, 4 * time.Second},
		{"jitter=default", 0, bridge.DefaultRefreshJitter, 8 * time.Second},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Every grant expires at the same instant: the window opens lead from now, when
			// the grant with the most jitter may be refreshed, and the new replica has had
			// the time to open every user's session.
			const lead = 4 * time.Second
			open := time.Now().Add(lead)
			expiry := open.Add(refreshMargin + c.spread)
			store.mu.Lock()
			for k, g := range store.m {
				tok := *g.Token
				tok.Expiry = expiry
				g.Token = &tok
				store.m[k] = g
			}
			store.mu.Unlock()
			before := as.Count("refresh_token")
			set := replica(c.jitter)
			defer set.Close()

			type sample struct {
				t time.Time
				n int
			}
			var samples []sample
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(25 * time.Millisecond)
				defer tick.Stop()
				for now := range tick.C {
					if now.After(open) {
						samples = append(samples, sample{now, as.Count("refresh_token") - before})
					}
					if now.After(open.Add(c.window)) {
						close(stop)
						return
					}
				}
			}()
			parallel(func(i int) error { return call(set, i) }, stop)
			<-sampled
			if b.Failed() || len(samples) == 0 {
				return
			}
			peak := 0
			for i, s := range samples {
				for _, e := range samples[i:] {
					if e.t.Sub(s.t) > time.Second {
						break
					}
					peak = max(peak, e.n-s.n)
				}
			}
			total := samples[len(samples)-1].n
			if c.spread == 0 && total != n {
				b.Errorf("%d refreshes in the window, want one per user (%d)", total, n)
			}
			b.ReportMetric(float64(total), "refreshes")
			b.ReportMetric(float64(total)/c.window.Minutes(), "refreshes/min")
			b.ReportMetric(float64(peak)*60, "peak-refreshes/min")
			b.ReportMetric(c.window.Seconds(), "window-s")
			b.ReportMetric(float64(n), "users")
			b.ReportMetric(float64(wrong.Load()), "cross-user")
			if wrong.Load() != 0 {
				b.Fatalf("%d requests carried another user's token", wrong.Load())
			}
			if d := as.DoubleSpent(); d != 0 {
				b.Fatalf("%d refresh tokens were spent twice", d)
			}
		})
	}
}
