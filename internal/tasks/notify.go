package tasks

import (
	"context"
	"encoding/json"
	"time"
)

// Following a task by its status notifications. A server may tell a task's new state
// instead of waiting to be polled: under 2025-11-25 with notifications/tasks/status on the
// session (the Task; a requestor must not rely on it), under the tasks extension with
// notifications/tasks (the DetailedTask tasks/get would return, result included) for the
// task IDs the client subscribed to with subscriptions/listen (notifications.taskIds,
// Config.Subscribe). The session layer hands each such notification to Client.Notified
// with the session it came on; a state the notification gives wakes the task's follower,
// which acts on it at once (fetches the result, answers input) as it would on a poll's
// answer. Polling stays: a server that never notifies is followed as before, and the poll
// schedule is not moved by notifications.
//
// Notifications are untrusted: one is read like a tasks/get answer (parseTask: the ID, the
// status and the message checked and bounded), one naming a task not in flight, a task
// created on another session (another user's, a server process since replaced) or in the
// other version's spelling is ignored, and a terminal state is never replaced. A
// notification can arrive before its task is followed (the server finished it right after
// creating it): the last MaxEarlyNotices of those are kept, stripped to the status, for the
// task that follows.

// The status notifications' methods.
const (
	MethodStatus2025 = "notifications/tasks/status" // 2025-11-25
	MethodStatusExt  = "notifications/tasks"        // the tasks extension (2026-07-28)
)

// NotificationMethods returns the methods of the notifications Client.Notified reads.
func NotificationMethods() []string { return []string{MethodStatus2025, MethodStatusExt} }

// Sink is what the session layer feeds: the task status notifications the servers of its
// sessions send. *Client is one.
type Sink interface {
	// Notified takes one notification (method, params) that came on session origin; it
	// does not block and does not keep params.
	Notified(origin any, method string, params json.RawMessage)
}

// early is a notification about a task not yet followed.
type early struct {
	origin any
	f      Flavour
	st     state
}

// Notified takes a task status notification that came on session origin (the value the
// session layer gives Created): a task in flight that origin created gets the state, and
// its follower wakes.
func (c *Client) Notified(origin any, method string, params json.RawMessage) {
	var f Flavour
	switch method {
	case MethodStatus2025:
		f = Flavour2025
	case MethodStatusExt:
		f = FlavourExt
	default:
		return
	}
	if origin == nil {
		return
	}
	st, err := parseTask(params, f)
	if err != nil {
		c.cfg.Log.Debug("ignored a task status notification", "method", method, "err", err)
		return
	}
	if f == FlavourExt {
		// It carries what tasks/get would: the outcome of an ended task, the requests of
		// one asking for input; without them tasks/get is asked.
		st.fromGet = !(st.Status == Completed && st.result == nil) && !(st.Status == InputRequired && st.inputRequests == nil)
		if st.result != nil {
			if res, err := decodeToolResult(st.result); err == nil {
				st.Result = res
			}
		}
	}
	c.mu.Lock()
	r := c.runs[st.ID]
	if r == nil {
		c.keepEarly(origin, f, st)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if r.sess == nil || r.sess != origin {
		return // a task of another session, or one known only by its ID
	}
	r.note(f, st, false)
}

// keepEarly keeps the status of a notification about a task not followed (yet). c.mu is
// held.
func (c *Client) keepEarly(origin any, f Flavour, st state) {
	st = state{Task: Task{ID: st.ID, Status: st.Status, StatusMessage: st.StatusMessage, CreatedAt: st.CreatedAt,
		LastUpdatedAt: st.LastUpdatedAt, TTL: st.TTL, PollInterval: st.PollInterval}, pollGiven: st.pollGiven}
	for i, e := range c.early {
		if e.origin == origin && e.st.ID == st.ID {
			c.early[i] = early{origin, f, st}
			return
		}
	}
	if len(c.early) >= MaxEarlyNotices {
		copy(c.early, c.early[1:])
		c.early = c.early[:len(c.early)-1]
	}
	c.early = append(c.early, early{origin, f, st})
}

// takeEarly removes and returns the kept notification of task id created on origin. c.mu
// is held.
func (c *Client) takeEarly(origin any, id string) (early, bool) {
	for i, e := range c.early {
		if e.origin == origin && e.st.ID == id {
			c.early = append(c.early[:i], c.early[i+1:]...)
			return e, true
		}
	}
	return early{}, false
}

// note gives r a notified state in flavour f (unless older: one kept from before r was
// followed, when a newer one came since) and wakes its follower.
func (r *Run) note(f Flavour, st state, older bool) {
	r.mu.Lock()
	if (r.flav != FlavourUnknown && r.flav != f) || (older && r.noted != nil) {
		r.mu.Unlock()
		return
	}
	r.noted = &st
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// applyNoted records the state a notification gave, if any: it reports whether there was
// one to act on. A task seen ended keeps its state.
func (r *Run) applyNoted(ctx context.Context) bool {
	r.mu.Lock()
	st := r.noted
	r.noted = nil
	if st == nil {
		r.mu.Unlock()
		return false
	}
	// An ended task's state stays, unless it lacked the outcome one now brings.
	keep := r.seen && r.last.Status.Terminal() && (r.last.fromGet || !st.fromGet || !st.Status.Terminal())
	r.mu.Unlock()
	if keep {
		return false
	}
	r.record(ctx, *st)
	return true
}

// sleep waits until the next poll is due, ctx ends, or a notification gives a state to act
// on (woke).
func (r *Run) sleep(ctx context.Context, due time.Time) (woke bool, err error) {
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-r.wake:
			if r.applyNoted(ctx) {
				return true, nil
			}
		}
	}
}
