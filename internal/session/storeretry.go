package session

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/ttalk/mcpbridge/bridge/auth"
)

// MaxStoreRetries bounds the background starts of a server whose start-up failed only
// because the token store did (StoreOnly), after the first: on the pools' backoff
// (Backoff), 20 attempts span about 7.5 minutes.
const MaxStoreRetries = 20

// StoreOnly reports whether err is a failure of the token store alone: its chain reaches
// auth.ErrTokenStore on every branch (a branch that wraps ErrTokenStore beside other causes
// is the store's own failure, its causes the store's), looking through go-sdk's own
// wrapping ("rejected by transport") and masked copies; nothing else (a timeout of the
// start-up, a refusal, a needed login) is in it.
func StoreOnly(err error) bool {
	ok, _ := storeOnly(err)
	return ok
}

// storeOnly is StoreOnly; neutral says err is go-sdk's own wrapping, which says nothing
// either way.
func storeOnly(err error) (ok, neutral bool) {
	switch e := err.(type) {
	case nil:
		return false, false
	case *jsonrpc.Error:
		return false, sdkLocal(e)
	case interface{ Original() error }:
		return storeOnly(e.Original())
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		if slices.Contains(errs, auth.ErrTokenStore) {
			return true, false
		}
		some := false
		for _, c := range errs {
			ok, neutral := storeOnly(c)
			if !ok && !neutral {
				return false, false
			}
			some = some || ok
		}
		return some, !some
	case interface{ Unwrap() error }:
		return storeOnly(e.Unwrap())
	}
	return err == auth.ErrTokenStore, false
}

// Backoff is the wait before the next open of a session (or start of a server) after
// failures in a row: none after the first, then l.FirstBackoff doubling up to l.MaxBackoff.
func Backoff(l Limits, failures int) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := l.FirstBackoff
	for i := 2; i < failures && d < l.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, l.MaxBackoff)
}

// StoreRetries runs the background starts of the servers whose start-up failed only
// because the token store did. Its zero value is ready; Stop ends it for good.
type StoreRetries struct {
	Limits Limits // the backoff: Backoff(Limits, n+1) before attempt n

	mu      sync.Mutex // guards the fields below
	ctx     context.Context
	cancel  context.CancelFunc
	stopped bool
	wg      sync.WaitGroup
}

// Go retries a start-up that failed with first when first is the store's alone (StoreOnly):
// it calls start with attempt 1, 2, ... MaxStoreRetries, on its own goroutine, each after
// the backoff that follows the failures so far (first's the first), while start reports
// that it failed only because of the store again. start's ctx ends with Stop. After Stop,
// Go does nothing.
func (r *StoreRetries) Go(first error, start func(ctx context.Context, attempt int) (again bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || !StoreOnly(first) {
		return
	}
	if r.ctx == nil {
		r.ctx, r.cancel = context.WithCancel(context.Background())
	}
	ctx := r.ctx
	r.wg.Go(func() {
		for n := 1; n <= MaxStoreRetries; n++ {
			t := time.NewTimer(Backoff(r.Limits, n+1))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if !start(ctx, n) || ctx.Err() != nil {
				return
			}
		}
	})
}

// Stop ends the retries: the waits end at once, a start under way sees its ctx end, and
// Stop returns when every goroutine of Go has.
func (r *StoreRetries) Stop() {
	r.mu.Lock()
	r.stopped = true
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
