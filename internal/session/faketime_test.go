package session

// Time-dependent behaviour of the pool tested in a testing/synctest bubble: time is fake
// and only advances when every goroutine in the bubble is blocked, so the test asserts the
// exact schedule without waiting on the wall clock. Everything the bubble uses (servers,
// transports, timers) is created inside it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/transport"
)

// testPool is a pool of a per-user server whose users' sessions are in-memory sessions of
// srv, opened by dial (in place of the user's grant over Streamable HTTP).
func testPool(t *testing.T, srv *mcp.Server) *Pool {
	log := slog.New(slog.DiscardHandler)
	life, stop := context.WithCancel(context.Background())
	p := New(Config{
		ID: "flaky",
		Spec: transport.Spec{ID: "flaky", Logger: log, InProcess: func() (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := srv.Connect(context.Background(), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}},
		Client:         mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil),
		Log:            log,
		Life:           life,
		ConnectTimeout: 10 * time.Second,
		PerUser:        true,
		ServeUsers:     true,
		Users:          Users{MaxSessions: 10, IdleTimeout: time.Hour, Handler: func(string) *auth.Handler { return nil }},
		Limits: Limits{FirstBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, CloseWait: 5 * time.Second,
			MinDiscoverWait: time.Second, MaxDiscoverWait: 10 * time.Second, StderrTail: 2048},
		Host: Host{
			Fail:   func(phase string, err error, _ *transport.Conn) error { return fmt.Errorf("%s: %w", phase, err) },
			AsFail: func(error) error { return nil },
			NeedsLogin: func(user string, reason auth.LoginReason) error {
				return fmt.Errorf("user %q: %s: %w", user, reason, auth.ErrNeedsLogin)
			},
			IsNeedsLogin: func(err error) bool { return errors.Is(err, auth.ErrNeedsLogin) },
			ValidUser:    func(string) error { return nil },
			Opened:       func(transport.Kind, *Session) {},
			List:         func(context.Context, *Session) error { return nil },
			Relist:       func() {},
		},
	})
	t.Cleanup(func() { _ = p.Close(stop) })
	return p
}

// A user whose server keeps failing is redialled on the shared session's schedule (see
// bridge's TestRedialBackoffSchedule): at 0, 0.5, 1.5, 3.5, ... seconds (the wait doubles,
// capped at 30s); requests in between fail at once saying when the next attempt is allowed,
// and one success resets the schedule. A user who must log in is not held back.
func TestUserRedialBackoffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
		p := testPool(t, srv)
		var refuse, noGrant atomic.Bool
		var mu sync.Mutex
		var dials []time.Time
		p.dialUser = func(ctx context.Context, u *userState) (*Session, error) {
			mu.Lock()
			dials = append(dials, time.Now())
			mu.Unlock()
			switch {
			case noGrant.Load():
				return nil, p.cfg.Host.NeedsLogin(u.id, auth.ReasonNoGrant)
			case refuse.Load():
				return nil, errors.New("connection refused")
			}
			sess, _, f := p.openAttempt(ctx, transport.KindInProcess, "", &negotiation{wait: time.Second})
			if f != nil {
				return nil, f.err
			}
			return sess, nil
		}
		dialsSince := func(n int) []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			var gaps []time.Duration
			for i := n; i < len(dials); i++ {
				gaps = append(gaps, dials[i].Sub(dials[i-1]))
			}
			return gaps
		}
		ctx := WithUser(t.Context(), "alice")
		ping := func() error {
			return p.Do(ctx, Request{Phase: "ping", What: "ping", Retryable: true, Timeout: time.Minute}, func(ctx context.Context, sess *Session) error {
				return sess.CS.Ping(ctx, nil)
			})
		}
		if err := ping(); err != nil {
			t.Fatal(err)
		}

		// The server goes away and refuses new connections.
		refuse.Store(true)
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		synctest.Wait() // the client has seen its session end
		died := time.Now()

		// Ping every 100ms for 95s.
		for time.Since(died) < 95*time.Second {
			err := ping()
			if err == nil {
				t.Fatal("ping succeeded against a refusing server")
			}
			if time.Since(died) == 100*time.Millisecond {
				// redialled at 0 and failed: the next attempt is allowed at 0.5s
				if !strings.Contains(err.Error(), "next reconnect allowed in 400ms (after 2 failures") {
					t.Errorf("ping 100ms after the failed redial: %v", err)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		want := []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
			8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
		gaps := append([]time.Duration{0}, dialsSince(2)...) // dials[0] is the first open
		mu.Lock()
		gaps[0] = dials[1].Sub(died)
		mu.Unlock()
		if fmt.Sprint(gaps) != fmt.Sprint(want) {
			t.Errorf("user's redials after the session died at %v (gaps), want %v", gaps, want)
		}

		// The server is back: the next attempt the schedule allows succeeds, and the
		// schedule starts over (a later death redials at once).
		refuse.Store(false)
		for ping() != nil {
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		n := len(dials)
		mu.Unlock()
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		synctest.Wait()
		start := time.Now()
		if err := ping(); err != nil {
			t.Fatalf("ping after a death following a success: %v", err)
		}
		if gaps := dialsSince(n); len(gaps) != 1 || time.Since(start) != 0 {
			t.Errorf("after a success, a new death took %d dials and %s, want one at once", len(gaps), time.Since(start))
		}

		// A user without a grant is told so at every request, none held back by a backoff.
		p.Forget("alice")
		noGrant.Store(true)
		for range 3 {
			if err := ping(); !errors.Is(err, auth.ErrNeedsLogin) {
				t.Fatalf("ping of a user without a grant = %v, want needs-login", err)
			}
		}
		noGrant.Store(false)
		if err := ping(); err != nil {
			t.Errorf("ping right after the user's login: %v", err)
		}
	})
}
