package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// errStoreDown is what a start-up gets from a token store that is down.
var errStoreDown = fmt.Errorf("%w: reading the grant: %w", bridge.ErrTokenStore, errors.New("redis: i/o timeout"))

// A server whose start-up failed only because the token store did is started again in the
// background at 0.5, 1.5, 3.5, ... seconds after Connect (the redial backoff: the wait
// doubles, capped at 30s), at most session.MaxStoreRetries (20) times. Once a start works
// the server rejoins the Set in its config place (its tools named after the others'), and
// OnStatus and OnToolsChanged say so. Another failure, the last retry, or Close ends the
// retries: Failed keeps the failure at Connect, OnStatus gets the last one (not after Close).
func TestRetrySchedule(t *testing.T) {
	second := time.Second
	backoff := []time.Duration{second / 2, second, 2 * second, 4 * second, 8 * second, 16 * second}
	for len(backoff) < 20 {
		backoff = append(backoff, 30*second)
	}
	for _, tc := range []struct {
		name string
		// fail is the failure of start n (0: at Connect), nil when it works; a store
		// failure until the store is back.
		fail     func(n int, since time.Duration) error
		closeAt  time.Duration // Close then, and see nothing more happen; 0: never
		gaps     []time.Duration
		rejoined bool
		failed   string // the last failure given to OnStatus, when not rejoined
	}{
		{name: "the store comes back after 40s", fail: func(_ int, since time.Duration) error {
			if since < 40*time.Second {
				return errStoreDown
			}
			return nil
		}, gaps: backoff[:7], rejoined: true},
		{name: "the store never comes back", fail: func(int, time.Duration) error { return errStoreDown },
			gaps: backoff, failed: errStoreDown.Error()},
		{name: "another failure ends the retries", fail: func(n int, _ time.Duration) error {
			if n < 3 {
				return errStoreDown
			}
			return errors.New("connection refused")
		}, gaps: backoff[:3], failed: "connection refused"},
		{name: "close ends the retries", fail: func(int, time.Duration) error { return errStoreDown },
			closeAt: 10 * time.Second, gaps: backoff[:4]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				echo := func(name string) *mcp.Server {
					srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
					srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
						func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
						})
					return srv
				}
				start := time.Now()
				var mu sync.Mutex
				var dials []time.Time
				var statuses []bridge.ServerStatus
				var changes []bridge.ToolsChange
				cfg := inMemory("a", echo("a"), nil, nil)
				open := cfg.InProcess
				cfg.InProcess = func() (mcp.Transport, error) {
					mu.Lock()
					n := len(dials)
					dials = append(dials, time.Now())
					mu.Unlock()
					if err := tc.fail(n, time.Since(start)); err != nil {
						return nil, err
					}
					return open()
				}
				opts := quietOpts()
				opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
					mu.Lock()
					statuses = append(statuses, st)
					mu.Unlock()
				}
				opts.OnToolsChanged = func(_ context.Context, ch bridge.ToolsChange) {
					mu.Lock()
					changes = append(changes, ch)
					mu.Unlock()
				}
				set, err := bridge.Connect(t.Context(), []bridge.ServerConfig{cfg, inMemory("b", echo("b"), nil, nil)}, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer set.Close()
				if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrTokenStore) {
					t.Fatalf("failed at Connect: %v", f)
				}
				if tc.closeAt > 0 {
					time.Sleep(tc.closeAt)
					if err := set.Close(); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(20 * time.Minute) // well past the last retry
				synctest.Wait()

				mu.Lock()
				defer mu.Unlock()
				var gaps []time.Duration
				for i := 1; i < len(dials); i++ {
					gaps = append(gaps, dials[i].Sub(dials[i-1]))
				}
				if !slices.Equal(gaps, tc.gaps) {
					t.Errorf("starts after Connect's %v apart, want %v", gaps, tc.gaps)
				}
				var names []string
				for _, tool := range set.Tools() {
					names = append(names, tool.Name)
				}
				var ids []string
				for _, s := range set.Servers() {
					ids = append(ids, s.ID())
				}
				last := statuses[len(statuses)-1]
				switch {
				case tc.closeAt > 0:
					if len(statuses) != 2 || len(changes) != 0 || len(set.Failed()) != 1 {
						t.Errorf("after Close: statuses %+v, changes %+v, failed %v", statuses, changes, set.Failed())
					}
				case tc.rejoined:
					if fmt.Sprint(ids) != "[a b]" || fmt.Sprint(names) != "[a__echo echo]" || len(set.Failed()) != 0 {
						t.Errorf("after the rejoin: servers %v, tools %v, failed %v; want [a b], [a__echo echo], none", ids, names, set.Failed())
					}
					if len(statuses) != 3 || last.ID != "a" || last.Err != nil || last.Retries != len(tc.gaps) {
						t.Errorf("statuses %+v, want a's failure, b, then a back after %d retries", statuses, len(tc.gaps))
					}
					if len(changes) != 1 || changes[0].Server != "a" || fmt.Sprint(changes[0].Added) != "[echo]" {
						t.Errorf("tools changes %+v, want a added echo", changes)
					}
					out, err := set.Tools()[0].Handler(t.Context(), nil)
					if err != nil || out != "a" {
						t.Errorf("a's echo after the rejoin: %q %v", out, err)
					}
				default:
					if f := set.Failed(); fmt.Sprint(ids) != "[b]" || len(f) != 1 || f[0].Server != "a" || !errors.Is(f[0], bridge.ErrTokenStore) {
						t.Errorf("after the retries: servers %v, failed %v, want [b] and a's store failure at Connect", ids, f)
					}
					if len(statuses) != 3 || last.ID != "a" || last.Err == nil || !strings.Contains(last.Err.Error(), tc.failed) ||
						last.Retries != len(tc.gaps) || len(changes) != 0 {
						t.Errorf("statuses %+v, changes %+v: want a's failure at Connect, b, then a's last failure (%s)", statuses, changes, tc.failed)
					}
				}
			})
		})
	}
}
