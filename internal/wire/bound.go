package wire

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Bound returns a context that is parent ended also by timeout and by life's end (a
// server's Close), and the function that releases it when the request is over. It is what
// context.WithTimeout plus context.AfterFunc(life, cancel) give, without their cost on the
// common path: a direct call (CallTool on stdio and in-process connections) waits on
// parent and life itself, and its connection's sweep fails it at the deadline (one timer
// per connection, not one per call), so it never needs the merged context. Anything
// that asks for Done gets a real one, made then: context.WithDeadline of parent,
// cancelled when life ends; from then on Value and Err are that context's, so its
// children attach to it directly. Before that, Err is computed (parent's error, Canceled
// once life ended, DeadlineExceeded once the deadline passed) and Value is parent's.
// (One difference remains: context.Cause of a Bound on which nobody called Done reports
// parent's cause.)
func Bound(parent, life context.Context, timeout time.Duration) (context.Context, func()) {
	b := &bound{parent: parent, life: life, deadline: time.Now().Add(timeout)}
	return b, b.release
}

// bound is Bound's context.
type bound struct {
	parent   context.Context
	life     context.Context
	deadline time.Time

	once     sync.Once
	merged   atomic.Pointer[mergedBound] // set by Done
	released atomic.Bool
}

// mergedBound is the real context a bound became when something asked for Done.
type mergedBound struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool
}

func (b *bound) Deadline() (time.Time, bool) {
	if d, ok := b.parent.Deadline(); ok && d.Before(b.deadline) {
		return d, true
	}
	return b.deadline, true
}

func (b *bound) Done() <-chan struct{} {
	b.once.Do(func() {
		ctx, cancel := context.WithDeadline(b.parent, b.deadline)
		stop := context.AfterFunc(b.life, cancel)
		b.merged.Store(&mergedBound{ctx: ctx, cancel: cancel, stop: stop})
	})
	if m := b.merged.Load(); m != nil {
		return m.ctx.Done()
	}
	// Released before anything asked for Done: over, like a cancelled context.
	ch := make(chan struct{})
	close(ch)
	return ch
}

// Err is the merged context's error once there is one; before that, and while the merged
// context has not yet seen life end (context.AfterFunc runs on its own goroutine), it is
// computed, so that it never lags behind life, parent or the deadline.
func (b *bound) Err() error {
	if m := b.merged.Load(); m != nil {
		if err := m.ctx.Err(); err != nil {
			return err
		}
	}
	if b.released.Load() {
		return context.Canceled
	}
	if err := b.parent.Err(); err != nil {
		return err
	}
	if b.life.Err() != nil {
		return context.Canceled
	}
	if !time.Now().Before(b.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (b *bound) Value(key any) any {
	if key == (boundKey{}) {
		return b
	}
	if m := b.merged.Load(); m != nil {
		return m.ctx.Value(key)
	}
	return b.parent.Value(key)
}

func (b *bound) release() {
	b.released.Store(true)
	b.once.Do(func() {}) // a Done after release makes nothing
	if m := b.merged.Load(); m != nil {
		m.stop()
		m.cancel()
	}
}

// boundKey is the Value key under which a Bound answers itself (CallerEnded).
type boundKey struct{}

// CallersDeadline reports whether ctx's deadline is the caller's own: that of the context
// the outermost Bound in ctx was made from, no later than every Bound's timeout. A request
// that ended at that deadline ended because the caller's context did, not by its timeout.
func CallersDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	if !ok {
		return false
	}
	root := ctx
	for {
		b, _ := root.Value(boundKey{}).(*bound)
		if b == nil {
			break
		}
		root = b.parent
	}
	rd, ok := root.Deadline()
	return ok && !rd.After(d)
}

// String names the context in panics and logs, as the standard ones do.
func (b *bound) String() string { return "wire.Bound" }

// wait blocks until done receives or b ends, waiting on b's parent and life (its deadline
// is the caller's: directCalls' sweep), and returns b's error when b ended first.
func (b *bound) wait(done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-b.parent.Done():
	case <-b.life.Done():
	}
	if err := b.Err(); err != nil {
		return err
	}
	return context.Canceled // not reached: parent or life ended
}
