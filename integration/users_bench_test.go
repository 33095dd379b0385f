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
// token against the user it is for. Reported: heap per idle user (each user logged in with
// an open session; client and server share the process, so the server's per-session state
// is included), p50/p99 call latency, and cross-user token uses (must be 0).
func BenchmarkUsers(b *testing.B) {
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

	ctx := context.Background()
	store := &memStore{m: map[string]bridge.StoredToken{}, locks: map[string]chan struct{}{}}
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler), Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", MaxSessions: n}})
	if err != nil || len(set.Failed()) > 0 {
		b.Fatalf("connect: %v %v", err, set.Failed())
	}
	b.Cleanup(func() { _ = set.Close() })
	tool := set.Tools()[0]
	users := make([]string, n)
	args := make([]json.RawMessage, n)
	for i := range users {
		users[i] = fmt.Sprintf("user-%04d", i)
		args[i], _ = json.Marshal(map[string]string{"user": oauthtest.UserArg(users[i])})
	}
	call := func(i int) error {
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
	if got := set.Servers()[0].UserSessions(); got != n {
		b.Fatalf("%d user sessions, want %d", got, n)
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
