package bridge_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// AfterCall gets a live context, bounded like a hook (it has a deadline), so an audit hook
// can write with it: after a success, a tool error, a denial and an invalid-arguments call.
func TestAfterCallContextIsLive(t *testing.T) {
	var hs hookServer
	var mu sync.Mutex
	var errs []error
	var deadlines []bool
	opts := &bridge.Options{Logger: discard(), BeforeCall: denyDestructive,
		AfterCall: func(ctx context.Context, c *bridge.Call, e *bridge.CallEnd) {
			_, ok := ctx.Deadline()
			mu.Lock()
			errs = append(errs, ctx.Err())
			deadlines = append(deadlines, ok)
			mu.Unlock()
		}}
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 30*time.Second)
	_, _ = byName(t, set.Tools(), "read_file").Handler(ctx, json.RawMessage(`{"path":"a"}`))
	_, _ = byName(t, set.Tools(), "broken").Handler(ctx, nil)
	_, _ = byName(t, set.Tools(), "delete_file").Handler(ctx, json.RawMessage(`{"path":"a"}`))
	_, _ = byName(t, set.Tools(), "read_file").Handler(ctx, json.RawMessage(`{"path":5}`))
	_, _ = set.Servers()[0].CallTool(ctx, "read_file", nil)
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 5 {
		t.Fatalf("AfterCall ran %d times, want 5", len(errs))
	}
	for i, err := range errs {
		if err != nil || !deadlines[i] {
			t.Errorf("call %d: AfterCall's ctx: err %v, deadline %v; want a live ctx with a deadline", i, err, deadlines[i])
		}
	}
}
