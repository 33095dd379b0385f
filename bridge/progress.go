package bridge

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification from a server about a running tool call.
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
	Status TaskStatus
}

type progressKey struct{}

// WithProgress returns a context under which tool calls (Handler, Server.CallTool and
// proxied tools/call) ask the server for progress notifications and pass each one to fn,
// with the context of the call it belongs to (which may have ended by then). A call that
// runs as an MCP task also passes each change of the task's status (see Progress.TaskID),
// and its progress notifications for the task's whole life; the task's statuses have
// reached fn when the call returns (unless fn is slow).
// fn runs on a goroutine of the server's own, one notification at a time and in order; it
// may block briefly or close the server. The queue behind a slow fn is the server's, shared
// by all its calls in flight: at most 64 notifications wait in it, the oldest dropped
// first (logged), so one slow fn delays the progress of every call to that server. go-sdk handles
// notifications apart from responses, so some may reach fn shortly after the call returned;
// those arriving more than progressLinger (2s) after it are dropped.
func WithProgress(ctx context.Context, fn func(context.Context, Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressFunc returns WithProgress's fn bound to the call's ctx, or nil.
func progressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(context.Context, Progress))
	if fn == nil {
		return nil
	}
	return func(p Progress) { fn(ctx, p) }
}

// progressRoutes maps the progress tokens of a server's calls in flight to their callbacks.
// go-sdk has one progress handler per client, so the server routes by token itself.
type progressRoutes struct {
	server string
	notify notifier // runs the callbacks off go-sdk's notification goroutine, so they may Close
	next   atomic.Int64
	m      sync.Map // token string -> progressRoute
}

type progressRoute struct {
	tool   string
	fn     func(Progress)
	taskID string // set while the token belongs to a task (hold)
}

// progressLinger is how long a call's token stays routed after the call returned, for
// notifications the server sent before its response but go-sdk delivers after it.
const progressLinger = 2 * time.Second

// register gives a call of tool its own token; the returned func, called when the call
// returns, unregisters it after progressLinger.
func (r *progressRoutes) register(tool string, fn func(Progress)) (string, func()) {
	tok := "mcpbridge-" + strconv.FormatInt(r.next.Add(1), 10)
	route := &progressRoute{tool: tool, fn: fn}
	r.m.Store(tok, route)
	return tok, func() { time.AfterFunc(progressLinger, func() { r.m.CompareAndDelete(tok, route) }) }
}

// hold keeps a call's token routed for the life of the task the call created (a task's
// progress notifications keep the call's token); the returned func releases it after
// progressLinger.
func (r *progressRoutes) hold(tok, tool, taskID string, fn func(Progress)) func() {
	route := &progressRoute{tool: tool, fn: fn, taskID: taskID}
	r.m.Store(tok, route)
	return func() { time.AfterFunc(progressLinger, func() { r.m.CompareAndDelete(tok, route) }) }
}

// deliver is the client's ProgressNotificationHandler.
func (r *progressRoutes) deliver(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
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
		Server:   r.server,
		Tool:     route.tool,
		Progress: req.Params.Progress,
		Total:    req.Params.Total,
		Message:  req.Params.Message,
		TaskID:   route.taskID,
	}
	r.notify.post(func() { route.fn(p) })
}
