package bridge_test

// Time-dependent behaviour (redial backoff, the UI resource cache TTL, the progress linger)
// tested in testing/synctest bubbles: time is fake and only advances when every goroutine
// in the bubble is blocked, so these tests assert exact schedules without waiting on the
// wall clock. Everything a bubble uses (servers, transports, timers) is created inside it.

import (
	"context"
	"encoding/json"
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
	"github.com/ttalk/mcpbridge/bridge"
)

// inMemory serves srv over a fresh in-memory pipe on every (re)dial; refuse makes dials fail.
func inMemory(id string, srv *mcp.Server, refuse *atomic.Bool, dialed func()) bridge.ServerConfig {
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		if dialed != nil {
			dialed()
		}
		if refuse != nil && refuse.Load() {
			return nil, errors.New("connection refused")
		}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func quietOpts() *bridge.Options {
	return &bridge.Options{Logger: slog.New(slog.DiscardHandler)}
}

// A server that keeps failing is redialled at 0, 0.5, 1.5, 3.5, ... seconds (the wait doubles,
// capped at 30s); calls in between fail at once saying when the next attempt is allowed, and
// one success resets the schedule.
func TestRedialBackoffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
		var refuse atomic.Bool
		var mu sync.Mutex
		var dials []time.Time
		s, err := bridge.Dial(t.Context(), inMemory("flaky", srv, &refuse, func() {
			mu.Lock()
			dials = append(dials, time.Now())
			mu.Unlock()
		}), quietOpts())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		dialsSince := func(n int) []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			var gaps []time.Duration
			for i := n; i < len(dials); i++ {
				gaps = append(gaps, dials[i].Sub(dials[i-1]))
			}
			return gaps
		}

		// The server goes away and refuses new connections.
		refuse.Store(true)
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		synctest.Wait() // the client has seen its session end
		died := time.Now()

		// Ping every 100ms for 95s.
		var lastErr error
		for time.Since(died) < 95*time.Second {
			err := s.Ping(t.Context())
			if err == nil {
				t.Fatal("ping succeeded against a refusing server")
			}
			if time.Since(died) == 100*time.Millisecond {
				// redialled at 0 and failed: the next attempt is allowed at 0.5s
				if !strings.Contains(err.Error(), "next reconnect allowed in 400ms (after 2 failures") {
					t.Errorf("ping 100ms after the failed redial: %v", err)
				}
			}
			lastErr = err
			time.Sleep(100 * time.Millisecond)
		}
		want := []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
			8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
		gaps := append([]time.Duration{0}, dialsSince(2)...) // dials[0] is the first Dial
		mu.Lock()
		first := dials[1].Sub(died)
		mu.Unlock()
		gaps[0] = first
		if fmt.Sprint(gaps) != fmt.Sprint(want) {
			t.Errorf("redials after the session died at %v (gaps), want %v", gaps, want)
		}
		var se *bridge.ServerError
		if !errors.As(lastErr, &se) || se.Server != "flaky" {
			t.Errorf("error during backoff = %v, want a *ServerError for flaky", lastErr)
		}

		// The server is back: the next attempt the schedule allows succeeds, and the
		// schedule starts over (a later death redials at once).
		refuse.Store(false)
		for {
			if err := s.Ping(t.Context()); err == nil {
				break
			}
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
		if err := s.Ping(t.Context()); err != nil {
			t.Fatalf("ping after a death following a success: %v", err)
		}
		if gaps := dialsSince(n); len(gaps) != 1 || time.Since(start) != 0 {
			t.Errorf("after a success, a new death took %d dials and %s, want one at once", len(gaps), time.Since(start))
		}
	})
}

// A ui:// resource is served from the cache until its TTL has passed, then read again;
// other resources are never cached.
func TestUIResourceCacheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reads atomic.Int64
		srv := mcp.NewServer(&mcp.Implementation{Name: "ui", Version: "1"}, nil)
		for _, uri := range []string{"ui://x/app.html", "file:///data.txt"} {
			srv.AddResource(&mcp.Resource{URI: uri, Name: uri},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					n := reads.Add(1)
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: fmt.Sprint("read ", n)}}}, nil
				})
		}
		opts := quietOpts()
		opts.UIResourceCacheTTL = time.Minute
		s, err := bridge.Dial(t.Context(), inMemory("ui", srv, nil, nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		read := func(uri string) string {
			t.Helper()
			res, err := s.ReadResource(t.Context(), uri)
			if err != nil {
				t.Fatal(err)
			}
			return res.Contents[0].Text
		}
		steps := []struct {
			after time.Duration // sleep before reading
			uri   string
			want  string
		}{
			{0, "ui://x/app.html", "read 1"},
			{59 * time.Second, "ui://x/app.html", "read 1"}, // cached
			{0, "file:///data.txt", "read 2"},
			{0, "file:///data.txt", "read 3"},              // never cached
			{time.Second, "ui://x/app.html", "read 1"},     // the TTL is inclusive
			{time.Nanosecond, "ui://x/app.html", "read 4"}, // expired: read again
			{time.Minute, "ui://x/app.html", "read 4"},     // cached anew
			{time.Nanosecond, "ui://x/app.html", "read 5"},
		}
		for i, st := range steps {
			time.Sleep(st.after)
			if got := read(st.uri); got != st.want {
				t.Errorf("step %d: read %s = %q, want %q", i, st.uri, got, st.want)
			}
		}
	})
}

// Progress a server sends shortly after its response still reaches the caller's callback;
// progress sent more than 2s after the call returned is dropped.
func TestProgressLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
		var late sync.WaitGroup
		srv.AddTool(&mcp.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				tok := req.Params.GetProgressToken()
				send := func(p float64, msg string) {
					_ = req.Session.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: p, Message: msg})
				}
				send(1, "during")
				late.Go(func() {
					time.Sleep(1900 * time.Millisecond)
					send(2, "after 1.9s")
					time.Sleep(200 * time.Millisecond)
					send(3, "after 2.1s")
				})
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
		s, err := bridge.Dial(t.Context(), inMemory("slow", srv, nil, nil), quietOpts())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var mu sync.Mutex
		var got []string
		ctx := bridge.WithProgress(t.Context(), func(_ context.Context, p bridge.Progress) {
			mu.Lock()
			got = append(got, p.Message)
			mu.Unlock()
		})
		if _, err := s.CallTool(ctx, "work", nil); err != nil {
			t.Fatal(err)
		}
		late.Wait()
		synctest.Wait() // every notification sent has been handled or dropped
		mu.Lock()
		defer mu.Unlock()
		if want := "[during after 1.9s]"; fmt.Sprint(got) != want {
			t.Errorf("progress seen: %v, want %s", got, want)
		}
	})
}
