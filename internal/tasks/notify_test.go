package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// session2025 is a Requester standing in for a 2025-11-25 session whose tasks have
// completed when polled and whose tasks/result answers at once; it counts the tasks/get.
type session2025 struct {
	mu   sync.Mutex
	gets int
}

func (s *session2025) Request(_ context.Context, _ time.Duration, _, method string, p *Params) (json.RawMessage, Flavour, error) {
	if method == methodTasksGet {
		s.mu.Lock()
		s.gets++
		s.mu.Unlock()
		return json.RawMessage(`{"taskId":"` + p.TaskID + `","status":"completed","pollInterval":60000}`), Flavour2025, nil
	}
	return json.RawMessage(`{"content":[{"type":"text","text":"` + p.TaskID + ` done"}]}`), Flavour2025, nil
}

func (s *session2025) Live() (Caps, Flavour, bool) { return Caps{ToolsCall: true}, Flavour2025, true }

func (s *session2025) polls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets
}

func status2025(id, status string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"taskId":%q,"status":%q,"pollInterval":60000}`, id, status))
}

// A notification wakes the follower of the task it names only when it came on the session
// that created the task, in that session's version, and is a readable Task: the others
// leave the task to its polls.
func TestNotifiedOnlyByItsSession(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin any
		method string
		params json.RawMessage
		wakes  bool
	}{
		{"its own", "s1", MethodStatus2025, status2025("t1", "completed"), true},
		{"another session", "s2", MethodStatus2025, status2025("t1", "completed"), false},
		{"no session", nil, MethodStatus2025, status2025("t1", "completed"), false},
		{"an unknown task", "s1", MethodStatus2025, status2025("t9", "completed"), false},
		{"the other version", "s1", MethodStatusExt, status2025("t1", "completed"), false},
		{"an unknown status", "s1", MethodStatus2025, status2025("t1", "done"), false},
		{"not an object", "s1", MethodStatus2025, json.RawMessage(`"completed"`), false},
		{"an oversized ID", "s1", MethodStatus2025, status2025(string(make([]byte, MaxIDBytes+1)), "completed"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &session2025{}
				c := New(Config{Server: "x", CallTimeout: time.Minute, TaskTimeout: time.Hour, Requester: srv})
				run, err := c.Created(t.Context(), "tool", json.RawMessage(`{"task":`+string(status2025("t1", "working"))+`}`), "s1", nil)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := c.Await(t.Context(), run)
					done <- err
				}()
				synctest.Wait() // following, asleep until the first poll
				start := time.Now()
				c.Notified(tc.origin, tc.method, tc.params)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				woke := time.Since(start) < MaxPollInterval
				if woke != tc.wakes || (woke && srv.polls() != 0) {
					t.Errorf("the task ended after %s and %d tasks/get; woken: %v, want %v", time.Since(start), srv.polls(), woke, tc.wakes)
				}
			})
		})
	}
}

// A notification about a task not followed yet (it came before the tools/call's answer was
// read) is kept for it, the last MaxEarlyNotices of them.
func TestNotifiedEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &session2025{}
		c := New(Config{Server: "x", CallTimeout: time.Minute, TaskTimeout: time.Hour, Requester: srv})
		for i := range MaxEarlyNotices + 1 {
			c.Notified("s1", MethodStatus2025, status2025(fmt.Sprint("t", i), "completed"))
		}
		for _, tc := range []struct {
			id    string
			wakes bool
		}{{"t0", false}, {"t1", true}, {fmt.Sprint("t", MaxEarlyNotices), true}} {
			run, err := c.Created(t.Context(), "tool", json.RawMessage(`{"task":`+string(status2025(tc.id, "working"))+`}`), "s1", nil)
			if err != nil {
				t.Fatal(err)
			}
			start, gets := time.Now(), srv.polls()
			if _, err := c.Await(t.Context(), run); err != nil {
				t.Fatal(err)
			}
			if woke := time.Since(start) < MaxPollInterval && srv.polls() == gets; woke != tc.wakes {
				t.Errorf("task %s ended after %s (%d tasks/get): woken by its early notification %v, want %v", tc.id, time.Since(start), srv.polls()-gets, woke, tc.wakes)
			}
		}
	})
}
