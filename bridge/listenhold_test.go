package bridge_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// methodLog records the requests a server received, with when.
type methodLog struct {
	mu   sync.Mutex
	seen []string
	at   map[string]time.Time // first time of each method
}

func (l *methodLog) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		l.mu.Lock()
		l.seen = append(l.seen, method)
		if _, ok := l.at[method]; !ok {
			l.at[method] = time.Now()
		}
		l.mu.Unlock()
		return next(ctx, method, req)
	}
}

// waitFor polls until method was received (deadline d) and returns the methods before it.
func (l *methodLog) waitFor(t *testing.T, method string, d time.Duration) (before []string, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		l.mu.Lock()
		i := slices.Index(l.seen, method)
		if i >= 0 {
			before, at = slices.Clone(l.seen[:i]), l.at[method]
		}
		l.mu.Unlock()
		if i >= 0 {
			return before, at
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v; received %v", method, d, l.seen)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// loggedServer is fixture "basic" recording its requests, started after delay.
func loggedServer(id string, delay time.Duration) (bridge.ServerConfig, *mcp.Server, *methodLog) {
	srv := newFixture("basic", nil)
	log := &methodLog{at: map[string]time.Time{}}
	srv.AddReceivingMiddleware(log.middleware)
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		time.Sleep(delay)
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}, srv, log
}

// While Connect starts several servers, a server's subscriptions/listen goes out after its
// tools are listed (listenhold.go), and a change the server made in between is not lost:
// the subscription's acknowledgement re-lists it. Without that re-listing the change below
// would never be seen (nobody was subscribed when it happened).
func TestListenHeldWhileSetStarts(t *testing.T) {
	cfgA, srvA, logA := loggedServer("a", 0)
	cfgB, _, logB := loggedServer("b", 0)
	var once sync.Once
	srvA.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				once.Do(func() {
					// The first listing is made; then the tools change, and the answer goes
					// out after go-sdk's notification of the change (10 ms later) went to
					// the subscribers it had: none yet.
					srvA.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
						func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("late"), nil })
					time.Sleep(100 * time.Millisecond)
				})
			}
			return res, err
		}
	})
	changes := make(chan bridge.ToolsChange, 8)
	opts := quiet()
	opts.OnToolsChanged = func(_ context.Context, c bridge.ToolsChange) { changes <- c }
	set, err := connectSet(t, []bridge.ServerConfig{cfgA, cfgB}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for name, log := range map[string]*methodLog{"a": logA, "b": logB} {
		if before, _ := log.waitFor(t, "subscriptions/listen", 10*time.Second); !slices.Contains(before, "tools/list") {
			t.Errorf("server %s: subscriptions/listen before tools/list (received before it: %v)", name, before)
		}
	}
	select {
	case c := <-changes:
		if c.Server != "a" || !slices.Equal(c.Added, []string{"late"}) {
			t.Errorf("change %+v, want tool late added on a", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the change made before the subscription was never seen")
	}
	res, err := set.Servers()[0].CallTool(ctxT(t, 10*time.Second), "late", nil)
	if err != nil || res.IsError {
		t.Errorf("calling the late tool: %+v, %v", res, err)
	}
}

// A server's listen is not held until a slow server of its set has started: it goes out
// shortly after its own listing.
func TestListenHoldIsBounded(t *testing.T) {
	const slowStart = 3 * time.Second
	cfgFast, _, logFast := loggedServer("fast", 0)
	cfgSlow, _, _ := loggedServer("slow", slowStart)
	done := make(chan error, 1)
	go func() {
		_, err := connect(t, []bridge.ServerConfig{cfgFast, cfgSlow}, nil)
		done <- err
	}()
	_, listed := logFast.waitFor(t, "tools/list", 10*time.Second)
	_, listened := logFast.waitFor(t, "subscriptions/listen", 10*time.Second)
	if d := listened.Sub(listed); d > slowStart-time.Second {
		t.Errorf("the fast server's listen went out %v after its listing, as late as the slow server's start", d)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
