package transport

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Nudging a stdio server. Some stdio servers (go-sdk's among them, now and then) hold an
// answer they have computed until they read their next input line; a client that waits
// without writing waits for its call timeout. So a stdio connection watches the requests it
// wrote: when one has gone unanswered for Spec.NudgeAfter and the server sent no bytes
// meanwhile, the connection writes the server a ping of its own, which the server must read
// (releasing a held answer) and answer. It pings again at most once per NudgeAfter while
// requests stay unanswered and the server stays quiet, and never while the server is
// sending. The pings carry string IDs with nudgePrefix, which no request of go-sdk's or of
// the direct client has (both use integers); their answers are taken off the wire here and
// never reach a caller. Nudging starts once the server has answered a first request
// (initialize, or server/discover): a server still starting is never pinged, as some refuse
// any request before initialization. A server that is really hung is pinged at most maxUnansweredNudges
// times without answering (so its stdin never fills up with pings); its calls end at their
// timeout.

// DefaultNudgeAfter is the default of Spec.NudgeAfter.
const DefaultNudgeAfter = 2 * time.Second

// maxUnansweredNudges bounds the pings written to a server that answers none of them.
const maxUnansweredNudges = 4

// methodCancelled is the notification that abandons a request.
const methodCancelled = "notifications/cancelled"

// nudgePrefix starts the ID of every ping a nudger writes.
const nudgePrefix = "mcpbridge-nudge-"

// reqKey is a JSON-RPC request ID as a map key (go-sdk's IDs are int64 or string).
type reqKey struct {
	n   int64
	s   string
	str bool
}

// keyOf returns the key of id, and false when id is not a request's ID.
func keyOf(id jsonrpc.ID) (reqKey, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return reqKey{n: v}, true
	case string:
		return reqKey{s: v, str: true}, true
	}
	return reqKey{}, false
}

// nudger watches one stdio connection's unanswered requests and pings a quiet server (see
// above). The zero value is off; newNudger turns it on.
type nudger struct {
	after time.Duration // <= 0: off
	// write writes one ping line; it is the connection's raw writer.
	write func([]byte) error

	heardAt atomic.Int64 // when the server last sent bytes: nanoseconds since base
	base    time.Time

	mu         sync.Mutex // guards the following fields
	pending    map[reqKey]time.Time
	timer      *time.Timer
	armed      bool // timer is set (or its callback is running)
	lastNudge  time.Time
	seq        uint64 // the last ping's number
	unanswered int    // pings written and not answered
	up         bool   // the server has answered a request
	closed     bool
}

func newNudger(after time.Duration, write func([]byte) error) *nudger {
	if after == 0 {
		after = DefaultNudgeAfter
	}
	return &nudger{after: after, write: write, base: time.Now(), pending: make(map[reqKey]time.Time)}
}

// on reports whether n nudges at all.
func (n *nudger) on() bool { return n != nil && n.after > 0 }

// heard records that the server sent bytes.
func (n *nudger) heard() {
	if n.on() {
		n.heardAt.Store(int64(time.Since(n.base)))
	}
}

// sent records that request id is about to be written.
func (n *nudger) sent(id jsonrpc.ID) {
	if !n.on() {
		return
	}
	k, ok := keyOf(id)
	if !ok {
		return
	}
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.pending[k] = now
	if !n.armed {
		n.armLocked(n.after)
	}
}

// done records that request id needs no answer any more: it was answered, cancelled, or
// could not be written.
func (n *nudger) done(id jsonrpc.ID) {
	if !n.on() {
		return
	}
	if k, ok := keyOf(id); ok {
		n.mu.Lock()
		delete(n.pending, k)
		n.mu.Unlock()
	}
}

// answered records the server's answer to request id.
func (n *nudger) answered(id jsonrpc.ID) {
	if !n.on() {
		return
	}
	k, ok := keyOf(id)
	n.mu.Lock()
	if ok {
		delete(n.pending, k)
	}
	n.up = true
	n.mu.Unlock()
}

// answeredN is answered for a direct call's integer ID.
func (n *nudger) answeredN(id int64) {
	if !n.on() {
		return
	}
	n.mu.Lock()
	delete(n.pending, reqKey{n: id})
	n.up = true
	n.mu.Unlock()
}

// cancelled records a notifications/cancelled the connection writes: the server need not
// answer the request it names.
func (n *nudger) cancelled(params json.RawMessage) {
	if !n.on() {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		n.done(id)
	}
}

// own reports whether r answers one of n's pings, and records it as answered.
func (n *nudger) own(r *jsonrpc.Response) bool {
	s, ok := r.ID.Raw().(string)
	if !ok || !strings.HasPrefix(s, nudgePrefix) {
		return false
	}
	if n.on() {
		n.mu.Lock()
		if n.unanswered > 0 {
			n.unanswered--
		}
		n.mu.Unlock()
	}
	return true
}

// close stops n: no ping is written after it returns (one being written finishes).
func (n *nudger) close() {
	if !n.on() {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	if n.timer != nil {
		n.timer.Stop()
	}
	clear(n.pending)
}

// armLocked sets the timer to fire after d; n.mu held.
func (n *nudger) armLocked(d time.Duration) {
	n.armed = true
	if n.timer == nil {
		n.timer = time.AfterFunc(d, n.fire)
		return
	}
	n.timer.Reset(d)
}

// fire pings the server if a request has been unanswered for n.after with no bytes from
// the server (and no ping) in that time, and sets the timer for the next look.
func (n *nudger) fire() {
	n.mu.Lock()
	if n.closed || len(n.pending) == 0 {
		n.armed = false
		n.mu.Unlock()
		return
	}
	now := time.Now()
	quiet := now
	for _, at := range n.pending {
		quiet = minTime(quiet, at) // the oldest unanswered request
	}
	quiet = maxTime(quiet, n.base.Add(time.Duration(n.heardAt.Load())), n.lastNudge)
	if wait := n.after - now.Sub(quiet); wait > 0 {
		n.armLocked(wait)
		n.mu.Unlock()
		return
	}
	if !n.up || n.unanswered >= maxUnansweredNudges { // starting, or hung: calls end at their timeout
		n.armLocked(n.after)
		n.mu.Unlock()
		return
	}
	n.seq++
	n.unanswered++
	n.lastNudge = now
	line := []byte(`{"jsonrpc":"2.0","id":"` + nudgePrefix + strconv.FormatUint(n.seq, 10) + `","method":"ping"}` + "\n")
	n.mu.Unlock()

	// Outside the lock: the write may block on a full pipe (until Close closes it). The
	// timer is set again only after it, so at most one ping write is in flight.
	err := n.write(line)

	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil || n.closed {
		n.armed = false
		return
	}
	n.armLocked(n.after)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a time.Time, bs ...time.Time) time.Time {
	for _, b := range bs {
		if b.After(a) {
			a = b
		}
	}
	return a
}

// writeLine writes one raw line to the server under the connection's write lock.
func (s *stdioConn) writeLine(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return context.Canceled
	}
	_, err := s.w.Write(line)
	return err
}

// track records, before msg is written, what the nudger must know of it: a request waits
// for its answer; a notifications/cancelled ends the wait for the request it names.
func (s *stdioConn) track(msg jsonrpc.Message) {
	if r, ok := msg.(*jsonrpc.Request); ok {
		switch {
		case r.ID.IsValid():
			s.nudge.sent(r.ID)
		case r.Method == methodCancelled:
			s.nudge.cancelled(r.Params)
		}
	}
}

// untrack undoes track for a request that was not written.
func (s *stdioConn) untrack(msg jsonrpc.Message) {
	if r, ok := msg.(*jsonrpc.Request); ok && r.ID.IsValid() {
		s.nudge.done(r.ID)
	}
}

// answered records the responses among msgs as answered and drops the answers to the
// nudger's own pings, reusing msgs.
func (s *stdioConn) answered(msgs []jsonrpc.Message) []jsonrpc.Message {
	out := msgs[:0]
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Response); ok {
			if s.nudge.own(r) {
				continue
			}
			s.nudge.answered(r.ID)
		}
		out = append(out, m)
	}
	clear(msgs[len(out):])
	return out
}
