package transport

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes is the default cap on one inbound message on every transport: a
// stdio frame, an HTTP response body, one SSE event. It matches go-sdk's own stdio line and
// SSE event limits.
const DefaultMaxMessageBytes = mcp.DefaultMaxLineLength

// ErrMessageTooLarge is wrapped by the error a Conn records (see Conn.Overrun) when a server sent a
// message over Spec.MaxFrameBytes.
var ErrMessageTooLarge = errors.New("message too large")

// budgetError says which limit a server broke. The session it happened on is broken: go-sdk
// fails the connection, and the caller should treat it as dead and redial.
type budgetError struct {
	What  string // "HTTP response body", "SSE event"
	Limit int64  // the limit in bytes
}

// Error names what was too large and the limit.
func (e *budgetError) Error() string {
	return fmt.Sprintf("the server sent an %s of more than %d bytes, the per-message limit", e.What, e.Limit)
}

// Unwrap returns ErrMessageTooLarge.
func (e *budgetError) Unwrap() error { return ErrMessageTooLarge }

// budget tracks one connection's per-message limit and its first overrun.
type budget struct {
	limit   int64 // <= 0: no limit
	overrun atomic.Pointer[budgetError]
}

// newBudget resolves Spec.MaxFrameBytes: 0 selects the default, negative disables.
func newBudget(maxBytes int) *budget {
	switch {
	case maxBytes == 0:
		return &budget{limit: DefaultMaxMessageBytes}
	case maxBytes < 0:
		return &budget{}
	}
	return &budget{limit: int64(maxBytes)}
}

// eventLimit is the MaxEventSize to give go-sdk's SSE readers: the same limit, or -1 for none.
func (b *budget) eventLimit() int {
	if b.limit <= 0 {
		return -1
	}
	return int(b.limit)
}

func (b *budget) record(what string) *budgetError {
	e := &budgetError{What: what, Limit: b.limit}
	if b.overrun.CompareAndSwap(nil, e) {
		return e
	}
	return b.overrun.Load()
}

// Limit implements wire.Budget: the limit in bytes, <= 0 for none.
func (b *budget) Limit() int64 { return b.limit }

// Overrun implements wire.Budget: it records an overrun of what and returns the first one.
func (b *budget) Overrun(what string) error { return b.record(what) }

// err returns the first overrun, or nil.
func (b *budget) err() error {
	if e := b.overrun.Load(); e != nil {
		return e
	}
	return nil
}

// limitedBody is a response body that fails with a *budgetError once more than limit bytes
// were read, so go-sdk's io.ReadAll of an endless body stops at the limit. The underlying
// body is closed at that point, which also stops the server's stream.
type limitedBody struct {
	rc   io.ReadCloser
	b    *budget
	what string
	n    int64
	err  error
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if room := l.b.limit - l.n + 1; int64(len(p)) > room {
		p = p[:room] // read one byte past the limit to tell "exactly limit" from "more"
	}
	n, err := l.rc.Read(p)
	l.n += int64(n)
	if l.n > l.b.limit {
		l.err = l.b.record(l.what)
		_ = l.rc.Close()
		return n - int(l.n-l.b.limit), l.err
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }
