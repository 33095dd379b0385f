package wire

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// TestBound: a Bound ends as context.WithTimeout plus an AfterFunc on life would, whether
// or not anything asked for Done; a direct call under it ends with it (its deadline through
// the connection's sweep) with the Bound's error.
func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(cancelParent, cancelLife context.CancelFunc)
		want error
	}{
		{"deadline", func(context.CancelFunc, context.CancelFunc) { time.Sleep(2 * time.Second) }, context.DeadlineExceeded},
		{"life ends", func(_, life context.CancelFunc) { life() }, context.Canceled},
		{"parent cancelled", func(parent, _ context.CancelFunc) { parent() }, context.Canceled},
	} {
		for _, merged := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					parent, cancelParent := context.WithCancel(context.Background())
					defer cancelParent()
					life, cancelLife := context.WithCancel(context.Background())
					defer cancelLife()
					ctx, release := Bound(context.WithValue(parent, ctxKey{}, "v"), life, time.Second)
					defer release()
					if ctx.Value(ctxKey{}) != "v" {
						t.Error("Value does not reach the parent")
					}
					if d, ok := ctx.Deadline(); !ok || time.Until(d) != time.Second {
						t.Errorf("Deadline = %v, %v", d, ok)
					}
					var child context.Context
					if merged {
						var cancelChild context.CancelFunc
						child, cancelChild = context.WithCancel(ctx)
						defer cancelChild()
					}
					var d Calls
					errc := make(chan error, 1)
					go func() {
						_, err := d.call(ctx, func(context.Context, jsonrpc.Message) error { return nil }, "tools/call", nil)
						errc <- err
					}()
					synctest.Wait()
					if err := ctx.Err(); err != nil {
						t.Fatalf("Err before the end = %v", err)
					}
					tc.end(cancelParent, cancelLife)
					if err := <-errc; !errors.Is(err, tc.want) {
						t.Errorf("wait = %v, want %v", err, tc.want)
					}
					if err := ctx.Err(); !errors.Is(err, tc.want) {
						t.Errorf("Err = %v, want %v", err, tc.want)
					}
					select {
					case <-ctx.Done():
					case <-time.After(time.Minute):
						t.Error("Done is not closed")
					}
					if merged {
						synctest.Wait()
						if child.Err() == nil {
							t.Error("a child of the Bound did not end with it")
						}
					}
				})
			})
		}
	}
}

// TestBoundWaitMergesNothing: a direct call's wait answered in time leaves the Bound
// unmerged (no context made, nothing registered on parent or life), and a Bound released
// before anyone asked for Done reports itself over.
func TestBoundWaitMergesNothing(t *testing.T) {
	ctx, release := Bound(context.Background(), context.Background(), time.Minute)
	done := make(chan struct{}, 1)
	done <- struct{}{}
	if err := ctx.(*bound).wait(done); err != nil {
		t.Fatal(err)
	}
	if ctx.(*bound).merged.Load() != nil {
		t.Fatal("the wait merged the Bound into a context")
	}
	release()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("Err after release = %v", ctx.Err())
	}
	select {
	case <-ctx.Done():
	default:
		t.Error("Done after release is not closed")
	}
}

// TestSweepExpiresEachAtItsDeadline: calls with different deadlines on one connection each
// end at their own deadline (the sweep re-arms for an earlier one and for the next one left),
// and a call answered in time is not touched.
func TestSweepExpiresEachAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d Calls
		write := func(context.Context, jsonrpc.Message) error { return nil }
		start := time.Now()
		ended := make(chan time.Duration, 3)
		for _, timeout := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
			ctx, release := Bound(context.Background(), context.Background(), timeout)
			go func() {
				defer release()
				_, err := d.call(ctx, write, "tools/call", nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("call with timeout %s: %v", timeout, err)
				}
				ended <- time.Since(start)
			}()
			synctest.Wait()
		}
		for _, want := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			if got := <-ended; got != want {
				t.Errorf("a call ended after %s, want %s", got, want)
			}
		}
	})
}

// TestWithoutExtensions: the named extensions leave the envelope's client capabilities,
// the extensions member with the last of them; everything else stays.
func TestWithoutExtensions(t *testing.T) {
	const env = `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"a":{},"b":{"x":1}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, tc := range []struct {
		drop []string
		want string
	}{
		{[]string{"a"}, `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"b":{"x":1}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`},
		{[]string{"a", "b"}, `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`},
		{[]string{"c"}, `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"a":{},"b":{"x":1}}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`},
	} {
		got, err := withoutExtensions(json.RawMessage(env), tc.drop)
		if err != nil || string(got) != tc.want {
			t.Errorf("drop %v: %s, %v\n want %s", tc.drop, got, err, tc.want)
		}
	}
	if got, err := withoutExtensions(json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), []string{"a"}); err != nil || string(got) != `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}` {
		t.Errorf("no capabilities: %s, %v", got, err)
	}
}

// TestCallersDeadline: a Bound's deadline is the caller's when the context it was made from
// ends no later than every Bound's timeout, through values and nested Bounds.
func TestCallersDeadline(t *testing.T) {
	bg := context.Background()
	for _, tc := range []struct {
		name   string
		caller time.Duration // 0: no deadline
		bounds []time.Duration
		want   bool
	}{
		{"no bound, no deadline", 0, nil, false},
		{"no bound, the caller's deadline", time.Second, nil, true},
		{"the bound's timeout", 0, []time.Duration{time.Second}, false},
		{"the bound's timeout is earlier", time.Minute, []time.Duration{time.Second}, false},
		{"the caller's deadline is earlier", time.Second, []time.Duration{time.Minute}, true},
		{"nested, the inner timeout", time.Hour, []time.Duration{time.Minute, time.Second}, false},
		{"nested, the outer timeout", time.Hour, []time.Duration{time.Second, time.Minute}, false},
		{"nested, the caller's deadline", time.Second, []time.Duration{time.Hour, time.Minute}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := bg
				if tc.caller > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.caller)
					defer cancel()
				}
				for _, d := range tc.bounds {
					var release func()
					ctx, release = Bound(context.WithValue(ctx, ctxKey{}, d), bg, d)
					defer release()
				}
				if got := CallersDeadline(ctx); got != tc.want {
					t.Errorf("CallersDeadline = %v, want %v", got, tc.want)
				}
			})
		})
	}
}
