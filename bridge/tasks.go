package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/internal/tasks"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// MCP tasks, client side: the protocol (wire shapes, lifecycle, polling, input) is
// internal/tasks; this file is its public types, the Server's task methods and the glue
// (taskHost: the live session for the tasks client, the server's callbacks for each task).

// TaskMode is config.TaskMode: when a server's tools run as MCP tasks (ServerConfig.Tasks,
// Options.Tasks, servers.yaml's tasks key).
type TaskMode = config.TaskMode

// The task modes (see bridge/config).
const (
	TasksAuto   = config.TasksAuto
	TasksAlways = config.TasksAlways
	TasksNever  = config.TasksNever
)

// TaskStatus is the state of an MCP task.
type TaskStatus = tasks.Status

// The task states. Completed, failed and cancelled are terminal.
const (
	TaskWorking       = tasks.Working
	TaskInputRequired = tasks.InputRequired
	TaskCompleted     = tasks.Completed
	TaskFailed        = tasks.Failed
	TaskCancelled     = tasks.Cancelled
)

// Task is an MCP task as last seen: what Server.StartTask and Server.PollTask return and
// what Options.OnTaskStatus receives. Its JSON form is what a host persists to resume the
// task later (Server.AwaitTask, Server.CancelTask by ID, also from another process for
// HTTP servers, which keep tasks beyond a session). Every string in it comes from the
// server: untrusted text (bounded to a few KB by the bridge).
//
// The bridge speaks both versions of tasks: the experimental tasks of protocol 2025-11-25 (a
// tool whose execution.taskSupport is "required" is called with a "task" member, then
// tasks/get, tasks/result, tasks/cancel) and the 2026-07-28 tasks extension
// (io.modelcontextprotocol/tasks, declared in the client capabilities: the server decides per
// call; tasks/get carries the result, tasks/update answers input). A tool call that runs as
// a task (Handler, Invoke, Server.CallTool, Set.Proxy) polls at the server's pollInterval,
// bounded to tasks.MinPollInterval..tasks.MaxPollInterval (backing off from tasks.FirstPoll when none is given;
// see Limits), reports each status change to WithProgress callbacks (Progress.TaskID,
// Status), Options.OnTaskStatus and span events, answers input_required through
// Options.OnElicitation (ElicitRequest.TaskID names the task; without it a 2026-07-28 task's
// input is declined), cancels the task on the server when ctx ends or a bound is hit, reports
// a stdio server's task whose process ended as lost with it, and is bounded by
// Options.TaskTimeout (each request stays bounded by the call timeout) and the TTL the server
// gives. A task that fails, is cancelled, expires, is unknown or is lost gives a *TaskError
// (ErrTaskFailed, ErrTaskCancelled, ErrTaskExpired, ErrUnknownTask, ErrTaskLost). IDs,
// states, intervals, messages, input requests and results are checked and bounded, and a
// server that hands out a task ID twice or answers about another task is caught. ServerConfig.Tasks (auto, always, never) says which tools run
// as tasks; ServerStatus.TaskTools lists them.
type Task = tasks.Task

// Errors of tasks, wrapped by a *TaskError (match with errors.Is).
var (
	// ErrTaskFailed: the task ended in status failed; TaskError.Err holds the JSON-RPC error
	// the server gave for it, when it gave one. (A tool's own failure, isError, is a result
	// and comes as a *results.ToolError like for any call.)
	ErrTaskFailed = tasks.ErrFailed
	// ErrTaskCancelled: the task ended in status cancelled, by the server or on request.
	ErrTaskCancelled = tasks.ErrCancelled
	// ErrTaskExpired: the task outlived its TTL before ending, or the server no longer
	// knows it after the TTL passed.
	ErrTaskExpired = tasks.ErrExpired
	// ErrUnknownTask: the server does not know the task ID (it never had it, or dropped
	// it), or answered about a task other than the one asked about.
	ErrUnknownTask = tasks.ErrUnknown
	// ErrTaskLost: the stdio server process that ran the task exited; the process started
	// since cannot know it, so it is not asked.
	ErrTaskLost = tasks.ErrLost
)

// TaskError is the error of a task that did not deliver a result. A Handler returns it
// wrapped in a *ServerError, like every failure that is not the tool's own.
type TaskError = tasks.Error

// taskCaps is what a session's server offers for tasks.
type taskCaps = tasks.Caps

// StartTask calls the server's tool name (its own name, as for CallTool) as a task and
// returns as soon as the server created it, with the task's ID to poll, await or cancel
// later (a detached task: the host keeps the ID, for example across a restart). Arguments
// are sent as given (nil means {}), like CallTool; Options.BeforeCall and AfterCall see
// the call (Origin OriginCallTool), AfterCall at creation.
//
// Under 2025-11-25 the tool must allow tasks (execution.taskSupport "required" or
// "optional") and the server must offer task-augmented tools/call. Under 2026-07-28 the
// server decides: when it answers at once, the returned Task has no ID, status completed
// and the Result.
func (s *Server) StartTask(ctx context.Context, name string, args json.RawMessage) (Task, error) {
	c := &toolCall{s: s, origin: OriginCallTool, startTask: true, remote: name, in: args}
	err := c.run(ctx)
	if c.task == nil { // refused before the request
		return Task{}, err
	}
	return *c.task, err
}

// startTask creates a task of rt for StartTask (the pipeline's send stage).
func startTask(ctx context.Context, s *Server, rt *catalog.Tool, args json.RawMessage) (Task, error) {
	var res *mcp.CallToolResult
	var run *taskRun
	err := s.do(ctx, PhaseCall, rt.Label, rt.Retryable(), func(ctx context.Context, sess *session.Session) error {
		params := &mcp.CallToolParams{Name: rt.Name, Arguments: args}
		if meta := s.opts.tel.RequestMeta(ctx); meta != nil {
			params.Meta = meta
		}
		var err error
		res, run, err = taskHost{s}.sendCall(ctx, sess, rt, params, true, sendOptions{})
		return err
	})
	switch {
	case err != nil:
		return Task{}, err
	case run == nil:
		return Task{Server: s.cfg.ID, Tool: rt.Name, Status: TaskCompleted, Result: res}, nil
	}
	if err := s.tasks.NoteCreated(run.Run); err != nil {
		return Task{}, run.Fail(err)
	}
	return run.Task(), nil
}

// PollTask asks the server once for the state of task id (tasks/get). A task that ended
// is returned like any other (its status says how); the error is for a failed request,
// ErrUnknownTask (in a *TaskError) when the server does not know the ID.
func (s *Server) PollTask(ctx context.Context, id string) (Task, error) {
	run, err := taskHost{s}.followID(ctx, id)
	if err != nil {
		return Task{}, err
	}
	t, err := run.Poll(ctx)
	if err != nil {
		return Task{}, run.Fail(err)
	}
	return t, nil
}

// AwaitTask waits for task id to end, answering its requests for input through
// Options.OnElicitation and reporting its status to WithProgress callbacks and
// Options.OnTaskStatus, and returns the tool's result (raw, as CallTool does: a result
// with IsError is not a Go error). A task that fails, is cancelled, expires or is unknown
// gives a *TaskError in a *ServerError. Cancelling ctx cancels the task on the server; the
// wait is bounded by the task timeout (Options.TaskTimeout, ServerConfig.TaskTimeout)
// unless ctx ends first.
func (s *Server) AwaitTask(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	run, err := taskHost{s}.followID(ctx, id)
	if err != nil {
		return nil, err
	}
	return run.Await(ctx, s.tasks.Timeout())
}

// CancelTask asks the server to cancel task id (tasks/cancel). Cancellation is
// cooperative: the task may still complete. Cancelling a task that already ended is an
// error from the server under 2025-11-25.
func (s *Server) CancelTask(ctx context.Context, id string) error {
	run, err := taskHost{s}.followID(ctx, id)
	if err != nil {
		return err
	}
	if err := run.Cancel(ctx); err != nil {
		return run.Fail(err)
	}
	return nil
}

// followID follows the task a host names by id (PollTask, AwaitTask, CancelTask), which
// must be a valid task ID.
func (h taskHost) followID(ctx context.Context, id string) (*taskRun, error) {
	if err := tasks.CheckID(id); err != nil {
		return nil, &ServerError{Server: h.s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	return h.follow().Follow(ctx, "", id, tasks.FlavourUnknown), nil
}

// newTasks is the tasks client of a server with cfg and o (its mode: the server's own,
// else the Options', else auto).
func newTasks(s *Server, cfg ServerConfig, o *options) *tasks.Client {
	tc := tasks.Config{
		Server:      cfg.ID,
		Mode:        cmp.Or(cfg.Tasks, o.Tasks),
		CallTimeout: o.callTimeout(cfg),
		TaskTimeout: cmp.Or(max(cfg.TaskTimeout, 0), max(o.TaskTimeout, 0), DefaultTaskTimeout),
		Log:         s.log,
		Requester:   taskHost{s},
		Gone:        func(origin any) (bool, error) { return s.pool.Ended(origin) }, // the pool is made after the tasks client
		Subscribe:   func(origin any, id string) func() { return s.pool.ListenTasks(origin, id) },
	}
	if o.OnElicitation != nil {
		tc.Ask = taskHost{s}.ask
	}
	return tasks.New(tc)
}

// callBudget is the time a call of the server's tool remote may take in all: the call
// timeout, or the task timeout when the call may run as a task (task: a tool that runs as
// one under 2025-11-25, any tool of a server that offers the 2026-07-28 extension). Each
// request of the call stays bounded by the call timeout.
func (h taskHost) callBudget(remote string) (budget time.Duration, task bool) {
	s := h.s
	caps, _, ok := h.Live()
	return s.tasks.Budget(s.opts.callTimeout(s.cfg), caps, ok, func() string {
		s.catMu.Lock()
		defer s.catMu.Unlock()
		if rt := s.remote[remote]; rt != nil {
			return rt.TaskSupport
		}
		return ""
	})
}

// TaskTool is a tool that declares MCP task support (ServerStatus.TaskTools): its name on
// the server (Tool) and its execution.taskSupport (Support: "required" or "optional").
type TaskTool = tasks.Tool

// sendCall sends one tools/call on sess (Session.CallTapped: directly or through go-sdk); when the call
// may become a task, with the task tap, on either path. It returns the result, or the task
// the server created instead. force (StartTask) asks for a task; o.shared: only the result's
// text is used (wire.CallOptions.SharedMeta); o.structured receives the result's raw
// structuredContent (the tap keeps it, on either path).
func (h taskHost) sendCall(ctx context.Context, sess *session.Session, rt *catalog.Tool, params *mcp.CallToolParams, force bool, o sendOptions) (*mcp.CallToolResult, *taskRun, error) {
	s := h.s
	tap, err := s.tasks.CallTap(sess.Caps, rt.TaskSupport, rt.Label, force)
	if err != nil {
		return nil, nil, err
	}
	var st *wire.Tap // the structuredContent's own tap, when no task tap follows the call
	if o.structured != nil {
		st = &o.structured.tap
	}
	res, raw, sc, err := sess.CallTapped(ctx, params, callOptions(ctx, rt, o.shared, &s.progress), tap, st) // internal/session
	if o.structured != nil {
		o.structured.raw = sc
	}
	if raw == nil {
		return res, nil, err
	}
	// A task handle: go-sdk decoded it as an (empty) tool result, or failed to.
	tok, _ := params.GetProgressToken().(string)
	r, err := h.follow().Created(ctx, rt.Name, raw, sess, tok)
	if err != nil {
		return nil, nil, err
	}
	return nil, r, nil
}

// taskHost is a Server as the tasks side sees it: the live session to send the task
// methods on (tasks.Requester), the tools/call that may become a task (sendCall) and its
// budget, and the server's callbacks for each task.
type taskHost struct{ s *Server }

// Request sends one task method on the live session (redialled when dead), bounded by
// timeout.
func (h taskHost) Request(ctx context.Context, timeout time.Duration, what, method string, params *tasks.Params) (json.RawMessage, tasks.Flavour, error) {
	var raw json.RawMessage
	var f tasks.Flavour
	err := h.s.request(ctx, false, session.Request{Phase: string(PhaseCall), What: what, Retryable: true, Timeout: timeout}, func(ctx context.Context, sess *session.Session) error {
		f = sess.TaskFlavour()
		var err error
		raw, err = tasks.Send(ctx, sess.CS, method, params)
		return err
	})
	return raw, f, err
}

// Live returns the live session's task offer and flavour.
func (h taskHost) Live() (taskCaps, tasks.Flavour, bool) {
	sess := h.s.pool.Current()
	if sess == nil {
		return taskCaps{}, tasks.FlavourUnknown, false
	}
	return sess.Caps, sess.TaskFlavour(), true
}

// ask gives an extension task's elicitation (checked by the tasks client) to
// Options.OnElicitation.
func (h taskHost) ask(ctx context.Context, taskID string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	s := h.s
	s.catMu.Lock()
	s.status.Elicitations++
	s.catMu.Unlock()
	return s.opts.OnElicitation(ctx, &ElicitRequest{Server: s.cfg.ID, Params: p, TaskID: taskID})
}

// taskRun is one task a Server follows (internal/tasks: its run, and the progress of the
// call that created it).
type taskRun = tasks.Followed[Progress]

// follow is the Server as a followed task sees it: its tasks client and lifetime, the
// progress routes, its callbacks (the call's span, Options.OnTaskStatus) and its errors.
func (h taskHost) follow() *tasks.Host[Progress] {
	s := h.s
	return &tasks.Host[Progress]{
		Client:     s.tasks,
		Life:       s.life,
		ProgressOf: session.ProgressFunc,
		AsProgress: func(t Task) Progress {
			return Progress{Server: t.Server, Tool: t.Tool, Message: t.StatusMessage, TaskID: t.ID, Status: t.Status}
		},
		Hold:  s.progress.Hold,
		Post:  s.progress.Notify.Post,
		Flush: func(ctx context.Context) { s.progress.Notify.Flush(ctx, session.ProgressLinger) },
		Status: func(ctx context.Context, t Task) {
			itel.TaskStatus(ctx, t.ID, string(t.Status))
			if fn := s.opts.OnTaskStatus; fn != nil {
				fn(ctx, t)
			}
		},
		// A lifecycle error is a *ServerError naming the server (and, wrapped by the tasks
		// side, the tool and the task).
		Fail: func(err error) error {
			var se *ServerError
			if errors.As(err, &se) {
				return se
			}
			return &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
		},
		Ended: func(ctx context.Context, label string, timeout time.Duration, err error) error {
			return s.pool.RequestErr(ctx, string(PhaseCall), label, timeout, err)
		},
	}
}
