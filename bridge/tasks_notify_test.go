package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/bridge"
)

// Tasks followed by their status notifications (internal/tasks, notify.go): a go-sdk
// server whose tasks finish soon but ask to be polled every minute (the bridge polls at
// most every 30 s) tells the bridge instead, the way a server author would with go-sdk
// (which sends neither version's notification itself): 2025-11-25's
// notifications/tasks/status on the session, the extension's notifications/tasks on the
// connections whose subscriptions/listen named the task. Timing runs in synctest bubbles.

// notify writes a notification on the server's side of c.
func (c *recordingConn) notify(method string, params map[string]any) {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	_ = c.Connection.Write(context.Background(), &jsonrpc.Request{Method: method, Params: b})
}

// detailed is task tk as its status notification carries it: 2025's Task, the extension's
// DetailedTask (what tasks/get answers).
func (tk *fxTask) detailed() map[string]any {
	tk.fx.mu.Lock()
	defer tk.fx.mu.Unlock()
	m := tk.wire()
	if tk.fx.ext {
		switch tk.status {
		case "completed":
			m["result"] = tk.result
		case "failed":
			m["error"] = tk.rpcErr
		case "input_required":
			m["inputRequests"] = maps.Clone(tk.input)
		}
	}
	return m
}

// statusMethod is the fixture's version's status notification.
func (fx *taskServer) statusMethod() string {
	if fx.ext {
		return "notifications/tasks"
	}
	return "notifications/tasks/status"
}

// subscribers are the connections that may be told of task tk: 2025, the one it was
// created on; the extension, those whose subscriptions/listen named it.
func (fx *taskServer) subscribers(tk *fxTask) []notifier {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if fx.ext {
		return slices.Clone(fx.listened[tk.id])
	}
	return []notifier{tk.conn}
}

func TestTaskFollowedByNotifications(t *testing.T) {
	const work = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		// onChange is the server's notifications on a change of task tk; other is the
		// connection of another client.
		onChange func(fx *taskServer, tk *fxTask, other *recordingConn)
		// notified: the call ends when the task does, without a poll; otherwise at the
		// first poll (the notifications were ignored).
		notified bool
	}{
		{"the task's own", func(fx *taskServer, tk *fxTask, _ *recordingConn) {
			for _, c := range fx.subscribers(tk) {
				c.notify(fx.statusMethod(), tk.detailed())
			}
		}, true},
		{"an unknown task ID", func(fx *taskServer, tk *fxTask, _ *recordingConn) {
			m := tk.detailed()
			m["taskId"] = "task-999"
			m["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "forged"}}}
			tk.conn.notify(fx.statusMethod(), m)
		}, false},
		{"the session of another client", func(fx *taskServer, tk *fxTask, other *recordingConn) {
			other.notify(fx.statusMethod(), tk.detailed())
		}, false},
		{"the other version's", func(fx *taskServer, tk *fxTask, _ *recordingConn) {
			method := "notifications/tasks"
			if fx.ext {
				method = "notifications/tasks/status"
			}
			tk.conn.notify(method, tk.detailed())
		}, false},
	} {
		for _, ext := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ext=%v", tc.name, ext), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					fx := newTaskServer(ext)
					fx.poll = 60000 // a minute: the bridge polls after 30 s
					fx.tool("slow", "required", func(ctx context.Context, tk *fxTask) {
						time.Sleep(work)
						tk.complete("done")
					})
					s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					other, err := bridge.Dial(t.Context(), fx.config("other"), quietOpts())
					if err != nil {
						t.Fatal(err)
					}
					defer other.Close()
					fx.mu.Lock()
					otherConn := fx.conns[len(fx.conns)-1]
					fx.mu.Unlock()
					fx.onChange = func(tk *fxTask) {
						fx.mu.Lock()
						ended := tk.status == "completed"
						fx.mu.Unlock()
						if ended {
							tc.onChange(fx, tk, otherConn)
						}
					}
					start := time.Now()
					text, err := taskTool(t, s, "slow").Handler(t.Context(), nil)
					took := time.Since(start)
					if err != nil || text != "done" {
						t.Fatalf("Handler = %q, %v; want the task's result", text, err)
					}
					gets, _, _ := fx.counts()
					switch {
					case tc.notified && (gets != 0 || took != work):
						t.Errorf("the call returned after %s and %d tasks/get; want at %s (the notification), with none", took, gets, work)
					case !tc.notified && (gets != 1 || took != maxPollInterval):
						t.Errorf("the call returned after %s and %d tasks/get; want at the first poll (%s): the notification is not the task's", took, gets, maxPollInterval)
					}
					fx.mu.Lock()
					listened := slices.Collect(maps.Keys(fx.listened))
					fx.mu.Unlock()
					if want := []string{"task-1"}; ext && !slices.Equal(listened, want) {
						t.Errorf("subscriptions/listen named task IDs %v, want %v", listened, want)
					} else if !ext && len(listened) != 0 {
						t.Errorf("subscriptions/listen named task IDs %v under 2025-11-25", listened)
					}
				})
			})
		}
	}
}
