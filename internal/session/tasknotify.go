package session

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/transport"
)

// Task status notifications (internal/tasks, notify.go). go-sdk's client knows neither
// version's (notifications/tasks/status, notifications/tasks) nor the task IDs of a
// subscriptions/listen, so: each session's connection hands the notifications of its server
// to Config.Tasks with the session as their origin (transport.Conn.OnNotifications: stdio,
// in-process and legacy SSE connections, and the event streams of Streamable HTTP; a user's
// own session's to the tasks it created, users.go), and ListenTasks sends a subscriptions/listen
// for a task's ID through go-sdk's own sending path (the handler below this package's
// sending middleware), so it carries the session's _meta and ends, with
// notifications/cancelled, when stopped. Over Streamable HTTP that listen is a POST whose
// event stream carries the task's notifications until stopped (go-sdk sends it with the
// listen's context, so stopping ends the request); it is sent off the caller's path, since
// the POST waits for the server's answer headers, and a session holds at most
// MaxTaskListens of them at once: the tasks beyond are polled.

// MaxTaskListens bounds the task subscriptions (ListenTasks) a session holds open at once:
// over Streamable HTTP each is a request, and a connection, of its own.
const MaxTaskListens = 16

// TaskSink takes task status notifications (Config.Tasks): the server's tasks client.
type TaskSink = tasks.Sink

// watchTasks hands the task status notifications conn carries to Config.Tasks, once the
// session they belong to is known (origin; until then a session has no tasks).
func (p *Pool) watchTasks(conn *transport.Conn, origin *atomic.Pointer[Session]) {
	sink := p.cfg.Tasks
	if sink == nil {
		return
	}
	conn.OnNotifications(tasks.NotificationMethods(), func(method string, params json.RawMessage) {
		if sess := origin.Load(); sess != nil {
			sink.Notified(sess, method, params)
		}
	})
}

// ListenTasks asks the server of session origin (a *Session that created the task) for
// the status notifications of task taskID (subscriptions/listen with notifications.taskIds,
// the tasks extension) until stop. It does nothing for a session that does not offer the
// extension, or that holds MaxTaskListens already.
func (p *Pool) ListenTasks(origin any, taskID string) (stop func()) {
	sess, ok := origin.(*Session)
	next := p.listens.sender()
	if !ok || next == nil || !sess.Caps.Extension {
		return func() {}
	}
	if sess.taskListens.Add(1) > MaxTaskListens {
		sess.taskListens.Add(-1)
		p.cfg.Log.Debug("too many task subscriptions on the session; polling the task", "max", MaxTaskListens)
		return func() {}
	}
	ctx, cancel := context.WithCancel(p.cfg.Life)
	stop = sync.OnceFunc(func() {
		cancel()
		sess.taskListens.Add(-1)
	})
	meta, err := sess.Conn.Direct().CallEnvelope(sess.CS.InitializeResult().ProtocolVersion)
	if err != nil {
		stop()
		return func() {}
	}
	params := &taskListenParams{meta: meta, ids: []string{taskID}}
	send := func() bool {
		// go-sdk writes a subscriptions/listen and returns; the stream lasts until ctx ends.
		_, err := next(ctx, methodListen, &mcp.ClientRequest[*taskListenParams]{Session: sess.CS, Params: params})
		if err != nil && ctx.Err() == nil {
			p.cfg.Log.Debug("subscriptions/listen for a task failed; polling it", "err", err)
		}
		return err == nil
	}
	if sess.Kind == transport.KindHTTP {
		go func() {
			if !send() {
				stop()
			}
		}()
		return stop
	}
	if !send() {
		stop()
		return func() {}
	}
	return stop
}

// taskListenParams are the params of a subscriptions/listen for task IDs, which go-sdk's
// SubscriptionsListenParams cannot carry.
type taskListenParams struct {
	mcp.ParamsBase
	meta json.RawMessage // the session's per-request _meta (wire.Client.CallEnvelope)
	ids  []string
}

// MarshalJSON writes {"_meta": ..., "notifications": {"taskIds": [...]}}.
func (p *taskListenParams) MarshalJSON() ([]byte, error) {
	var w struct {
		Meta          json.RawMessage `json:"_meta,omitempty"`
		Notifications struct {
			TaskIDs []string `json:"taskIds"`
		} `json:"notifications"`
	}
	w.Meta = p.meta
	w.Notifications.TaskIDs = p.ids
	return json.Marshal(&w)
}
