package transport

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// TestBound: a Bound ends as context.WithTimeout plus an AfterFunc on life would, whether
// or not anything asked for Done, and a direct call's wait on it merges nothing.
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
					var w waitTimers
					errc := make(chan error, 1)
					go func() { errc <- w.wait(ctx, make(chan struct{})) }()
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
	var w waitTimers
	if err := w.wait(ctx, done); err != nil {
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
