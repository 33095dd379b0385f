package session

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/tasks"
)

// Progress is one progress notification from a server about a running tool call
// (bridge.Progress).
type Progress struct {
	Server   string  // server ID
	Tool     string  // the tool's name on the server
	Progress float64 // increases as work is done
	Total    float64 // 0 when unknown
	Message  string
	// TaskID and Status are set when the call runs as an MCP task and its status or status
	// message changed (Message is then the server's statusMessage; Progress and Total are
	// 0). A task's progress notifications carry TaskID too.
	TaskID string
	Status tasks.Status
}

// ProgressRoutes maps the progress tokens of a server's calls in flight to their callbacks.
// go-sdk has one progress handler per client, so the server routes by token itself.
type ProgressRoutes struct {
	Server string   // the server's ID, for each Progress
	Notify Notifier // runs the callbacks off go-sdk's notification goroutine, so they may Close
	next   atomic.Int64
	m      sync.Map // token string -> progressRoute
}

type progressRoute struct {
	tool   string
	fn     func(Progress)
	taskID string // set while the token belongs to a task (hold)
}

// ProgressLinger is how long a call's token stays routed after the call returned, for
// notifications the server sent before its response but go-sdk delivers after it.
const ProgressLinger = 2 * time.Second

// Register gives a call of tool its own token; the returned func, called when the call
// returns, unregisters it after ProgressLinger.
func (r *ProgressRoutes) Register(tool string, fn func(Progress)) (string, func()) {
	tok := "mcpbridge-" + strconv.FormatInt(r.next.Add(1), 10)
	route := &progressRoute{tool: tool, fn: fn}
	r.m.Store(tok, route)
	return tok, func() { time.AfterFunc(ProgressLinger, func() { r.m.CompareAndDelete(tok, route) }) }
}

// Hold keeps a call's token routed for the life of the task the call created (a task's
// progress notifications keep the call's token); the returned func releases it after
// ProgressLinger.
func (r *ProgressRoutes) Hold(tok, tool, taskID string, fn func(Progress)) func() {
	route := &progressRoute{tool: tool, fn: fn, taskID: taskID}
	r.m.Store(tok, route)
	return func() { time.AfterFunc(ProgressLinger, func() { r.m.CompareAndDelete(tok, route) }) }
}

// Deliver is the client's ProgressNotificationHandler.
func (r *ProgressRoutes) Deliver(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := r.m.Load(tok)
	if !ok {
		return
	}
	route := v.(*progressRoute)
	p := Progress{
		Server:   r.Server,
		Tool:     route.tool,
		Progress: req.Params.Progress,
		Total:    req.Params.Total,
		Message:  req.Params.Message,
		TaskID:   route.taskID,
	}
	r.Notify.Post(func() { route.fn(p) })
}

// MaxPendingCallbacks bounds the host callbacks waiting in a Notifier behind a slow one.
const MaxPendingCallbacks = 64

// Notifier runs a server's host callbacks in order, on a goroutine of its own that is not
// counted as background work: Close does not wait for it, so a callback may call Close (of
// the server, its Set, or Tools) and return at once.
type Notifier struct {
	Log     *slog.Logger // where a dropped callback is reported
	mu      sync.Mutex   // guards the fields below
	queue   []func()
	running bool
}

// HeldLocks names the Notifier's locks that some goroutine holds now, for the host's tests of
// the lock order (a leaf: nothing holds it while logging or calling out).
func (n *Notifier) HeldLocks() []string {
	if n.mu.TryLock() {
		n.mu.Unlock()
		return nil
	}
	return []string{"notifier.mu"}
}

// Post queues f behind the callbacks not yet run, dropping the oldest beyond
// MaxPendingCallbacks.
func (n *Notifier) Post(f func()) {
	n.mu.Lock()
	dropped := len(n.queue) == MaxPendingCallbacks
	if dropped {
		n.queue = n.queue[1:]
	}
	n.queue = append(n.queue, f)
	start := !n.running
	n.running = true
	n.mu.Unlock()
	if start {
		go n.run()
	}
	if dropped {
		n.Log.Warn("a host callback is slow; the oldest pending change notification was dropped", "pending", MaxPendingCallbacks)
	}
}

// Flush waits, at most d (and while ctx lasts), until the callbacks posted so far have run,
// so a caller has seen them before the call returns.
func (n *Notifier) Flush(ctx context.Context, d time.Duration) {
	seen := make(chan struct{})
	n.Post(func() { close(seen) })
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-seen:
	case <-ctx.Done():
	case <-t.C: // a slow callback; the rest arrive later
	}
}

func (n *Notifier) run() {
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		f := n.queue[0]
		n.queue = n.queue[1:]
		n.mu.Unlock()
		f()
	}
}

// progressKey is the context key of WithProgress's callback.
type progressKey struct{}

// WithProgress returns a context under which tool calls pass each progress notification
// to fn, with the context of the call it belongs to (bridge.WithProgress).
func WithProgress(ctx context.Context, fn func(context.Context, Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFunc returns WithProgress's fn bound to the call's ctx, or nil.
func ProgressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(context.Context, Progress))
	if fn == nil {
		return nil
	}
	return func(p Progress) { fn(ctx, p) }
}
