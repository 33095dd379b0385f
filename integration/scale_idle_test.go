package integration

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// connCounter counts an httptest server's open connections through its ConnState hook: a
// connection is open from StateNew until StateClosed or StateHijacked.
type connCounter struct {
	mu   sync.Mutex
	open map[net.Conn]http.ConnState
}

func (c *connCounter) hook(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		delete(c.open, conn)
		return
	}
	c.open[conn] = st
}

// count returns the number of open connections and how many of them are idle.
func (c *connCounter) count() (open, idle int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.open {
		if st == http.StateIdle {
			idle++
		}
	}
	return len(c.open), idle
}

// waitOpen polls until no connection is open or the deadline passes, and returns the last
// counts.
func (c *connCounter) waitOpen(within time.Duration) (open, idle int) {
	deadline := time.Now().Add(within)
	for {
		open, idle = c.count()
		if open == 0 || time.Now().After(deadline) {
			return open, idle
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// TestCloseLeavesNoConnections: after Set.Close, no connection of the bridge's to a
// Streamable HTTP server stays open, idle keep-alive ones included, for stateless
// (2026-07-28, the direct path) and stateful (2025-11-25, go-sdk's session) servers: two
// endpoints on one server, 32 callers calling them until Close ends their calls (Close
// cancels what is in flight, go-sdk tells the server with notifications/cancelled after
// Close began, and direct calls that had their session before Close would still be sent).
// The connections are counted on the server side; three rounds, since what is in flight
// at Close varies.
func TestCloseLeavesNoConnections(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		name := "stateful"
		if stateless {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) {
			const endpoints = 2
			mux, cfgs := echoEndpoints(endpoints, stateless)
			cc := &connCounter{open: map[net.Conn]http.ConnState{}}
			ts := httptest.NewUnstartedServer(mux)
			ts.Config.ConnState = cc.hook
			ts.Start()
			t.Cleanup(ts.Close)
			for i := range cfgs {
				cfgs[i].URL = ts.URL + cfgs[i].URL
			}
			for round := range 3 {
				closeWhileCalling(t, cfgs)
				if open, idle := cc.waitOpen(10 * time.Second); open > 0 {
					t.Fatalf("round %d: %d connections (%d idle) still open on the server 10 s after Set.Close", round, open, idle)
				}
			}
		})
	}
}

// closeWhileCalling connects cfgs, calls add from 32 goroutines until 500 calls were made,
// closes the set while they go on calling, and waits for every caller to see an error.
func closeWhileCalling(t *testing.T, cfgs []bridge.ServerConfig) {
	t.Helper()
	ctx := testContext(t, testTimeout)
	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) > 0 {
		_ = set.Close()
		t.Fatalf("skipped: %v", f)
	}
	var calls []callTool
	for _, tool := range set.Tools() {
		calls = append(calls, handlerCall(tool.Handler))
	}
	var (
		wg      sync.WaitGroup
		made    atomic.Int64
		enough  = make(chan struct{})
		once    sync.Once
		errOnce sync.Once
		early   error
		closed  atomic.Bool
	)
	for i := range 32 {
		wg.Go(func() {
			for n := i; ; n++ {
				if err := calls[n%len(calls)](ctx); err != nil {
					if !closed.Load() {
						errOnce.Do(func() { early = err })
						once.Do(func() { close(enough) })
					}
					return
				}
				if made.Add(1) >= 500 {
					once.Do(func() { close(enough) })
				}
			}
		})
	}
	<-enough
	closed.Store(true)
	if err := set.Close(); err != nil {
		t.Errorf("Set.Close: %v", err)
	}
	wg.Wait()
	if early != nil {
		t.Fatalf("a call before Close: %v", early)
	}
}

// echoEndpoints mounts n go-sdk bench servers on one mux at /mcp/0 … /mcp/n-1 and returns
// the mux with one Streamable HTTP server config per endpoint (URL relative: callers prefix
// their httptest server's URL).
func echoEndpoints(n int, stateless bool) (*http.ServeMux, []bridge.ServerConfig) {
	mux := http.NewServeMux()
	cfgs := make([]bridge.ServerConfig, n)
	for i := range n {
		srv := newBenchServer(0)
		path := "/mcp/" + strconv.Itoa(i)
		mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: stateless, Logger: slog.New(slog.DiscardHandler)}))
		cfgs[i] = bridge.ServerConfig{ID: "s" + strconv.Itoa(i), Type: bridge.TypeHTTP, URL: path}
	}
	return mux, cfgs
}
