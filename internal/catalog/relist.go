package catalog

import (
	"context"
	"log/slog"
	"sync"
)

// Relister coalesces a server's tools/list_changed notifications: one re-listing at a time,
// and one more after it when notifications arrived meanwhile.
type Relister struct {
	mu      sync.Mutex // guards following fields
	running bool
	again   bool
}

// Soon runs once (a re-listing) in the background with bg after a list_changed
// notification: one at a time, and one more after it when notifications arrived meanwhile;
// none once life ended.
func (r *Relister) Soon(life context.Context, bg func(func()), once func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if life.Err() != nil {
		return
	}
	if r.running {
		r.again = true
		return
	}
	r.running = true
	bg(func() {
		for {
			once()
			r.mu.Lock()
			if !r.again || life.Err() != nil {
				r.running = false
				r.mu.Unlock()
				return
			}
			r.again = false
			r.mu.Unlock()
		}
	})
}

// HeldLocks names the Relister's locks that some goroutine holds now, for the host's tests
// of the lock order (nothing holds one while logging or calling out).
func (r *Relister) HeldLocks() []string {
	if r.mu.TryLock() {
		r.mu.Unlock()
		return nil
	}
	return []string{"Relister.mu"}
}

// LogLater holds log lines found under a lock, to be written after it is released (the
// bridge's lock order: never log under a lock). Deferred flushes run after deferred unlocks
// registered later.
type LogLater []func()

// Warn logs msg at level warn on Flush.
func (l *LogLater) Warn(log *slog.Logger, msg string, args ...any) {
	*l = append(*l, func() { log.Warn(msg, args...) })
}

// Error logs msg at level error on Flush.
func (l *LogLater) Error(log *slog.Logger, msg string, args ...any) {
	*l = append(*l, func() { log.Error(msg, args...) })
}

// Flush writes the lines held, in order.
func (l *LogLater) Flush() {
	for _, f := range *l {
		f()
	}
}
