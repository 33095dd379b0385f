package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/bridge"
)

// Tasks of a 2026-07-28 Streamable HTTP server followed by their status notifications: the
// bridge's subscriptions/listen for a task's ID is a POST whose event stream carries the
// task's notifications/tasks until the task ends, then the bridge closes it.

// notifier is a way a fixture tells a client of a task's change: an in-process connection,
// or the event stream of a subscriptions/listen over Streamable HTTP.
type notifier interface {
	notify(method string, params map[string]any)
}

// sseListener is the event stream of one subscriptions/listen naming task IDs.
type sseListener struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	id     json.RawMessage // the listen request's ID
	closed bool            // the handler returned: w is no longer to be written
}

func (l *sseListener) notify(method string, params map[string]any) {
	params = maps.Clone(params)
	params["_meta"] = map[string]any{"io.modelcontextprotocol/subscriptionId": l.id}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		panic(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	fmt.Fprintf(l.w, "event: message\ndata: %s\n\n", b)
	l.w.(http.Flusher).Flush()
}

// serveTaskListen answers a subscriptions/listen naming task IDs the way fx.listenHTTP
// says, and reports whether r was one.
func (fx *taskServer) serveTaskListen(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := readAllRestore(r)
	if err != nil {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "subscriptions/listen" {
		return false
	}
	var p struct {
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	if json.Unmarshal(req.Params, &p) != nil || len(p.Notifications.TaskIDs) == 0 {
		return false
	}
	id, _ := json.Marshal(req.ID.Raw())
	if fx.listenHTTP == "hang" {
		// Never answers, not even with its headers, until the client gives up the request.
		fx.hold(r, p.Notifications.TaskIDs, &sseListener{closed: true}, false)
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	l := &sseListener{w: w, id: id}
	l.notify("notifications/subscriptions/acknowledged", map[string]any{"notifications": map[string]any{"taskIds": p.Notifications.TaskIDs}})
	if fx.listenHTTP == "close" {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "result": map[string]any{}})
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
		return true
	}
	fx.hold(r, p.Notifications.TaskIDs, l, true)
	return true
}

// hold makes l a subscriber to task IDs ids (told on fx.subscribed when signal is set)
// until the client ends r; then l is closed and forgotten.
func (fx *taskServer) hold(r *http.Request, ids []string, l *sseListener, signal bool) {
	fx.mu.Lock()
	if fx.listened == nil {
		fx.listened = map[string][]notifier{}
	}
	for _, tid := range ids {
		fx.listened[tid] = append(fx.listened[tid], l)
	}
	fx.mu.Unlock()
	for _, tid := range ids {
		if signal && fx.subscribed != nil {
			fx.subscribed <- tid
		}
	}
	<-r.Context().Done() // until the client closes the stream
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	fx.mu.Lock()
	for _, tid := range ids {
		fx.listened[tid] = slices.DeleteFunc(fx.listened[tid], func(n notifier) bool { return n == l })
	}
	fx.mu.Unlock()
}

// listening returns the number of open subscriptions naming task id.
func (fx *taskServer) listening(id string) int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return len(fx.listened[id])
}

func TestTaskFollowedByNotificationsHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, listen string
		poll         int // the tasks' pollInterval, ms
		notified     bool
	}{
		// A minute between polls (the bridge polls after 30 s): only the notification can end
		// the call within its 20 s.
		{"stream held", "", 60000, true},
		// The server ends the subscription at once: the task is polled.
		{"stream closed at once", "close", 200, false},
		// The server never answers the subscription: the task is polled, and the request
		// is given up when the task ends.
		{"listen never answered", "hang", 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newTaskServer(true)
			fx.poll = tc.poll
			fx.listenHTTP = tc.listen
			fx.subscribed = make(chan string, 4)
			fx.tool("slow", "required", func(ctx context.Context, tk *fxTask) {
				if tc.notified {
					// The task ends once the client has subscribed to it (or after 10 s,
					// and then the test fails at its deadline).
					select {
					case <-fx.subscribed:
					case <-time.After(10 * time.Second):
					}
				} else {
					time.Sleep(300 * time.Millisecond)
				}
				tk.complete("done")
			})
			fx.onChange = func(tk *fxTask) {
				fx.mu.Lock()
				ended := tk.status == "completed"
				fx.mu.Unlock()
				if ended {
					for _, n := range fx.subscribers(tk) {
						n.notify(fx.statusMethod(), tk.detailed())
					}
				}
			}
			s, err := bridge.Dial(t.Context(), fx.httpConfig(t, "fx"), quietOpts())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			text, err := taskTool(t, s, "slow").Handler(ctx, nil)
			if err != nil || text != "done" {
				t.Fatalf("Handler = %q, %v; want the task's result", text, err)
			}
			gets, _, _ := fx.counts()
			switch {
			case tc.notified && gets != 0:
				t.Errorf("%d tasks/get; want none: the notification on the listen stream ends the task", gets)
			case !tc.notified && gets == 0:
				t.Errorf("no tasks/get; want the task polled once its subscription ended")
			}
			// The subscription ends with the task: the bridge closes its stream.
			deadline := time.Now().Add(10 * time.Second)
			for fx.listening("task-1") != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the listen stream for task-1 is still open 10 s after the call")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
