package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/bridge/config"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// MCP tasks, client side. go-sdk v1.8.0 has none, so the bridge speaks this part itself:
// the experimental tasks of protocol 2025-11-25 (a tools/call augmented with "task", then
// tasks/get, tasks/result, tasks/cancel) and the tasks extension io.modelcontextprotocol/tasks
// of 2026-07-28 (the server answers any tools/call with a task handle when it likes; then
// tasks/get, which carries the result, tasks/update for input, tasks/cancel). The wire
// shapes are in taskwire.go, the lifecycle in taskrun.go.

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
type TaskStatus string

// The task states. Completed, failed and cancelled are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the task can no longer change: completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

func (s TaskStatus) known() bool {
	return s == TaskWorking || s == TaskInputRequired || s.Terminal()
}

// Task is an MCP task as last seen: what Server.StartTask and Server.PollTask return and
// what Options.OnTaskStatus receives. Its JSON form is what a host persists to resume the
// task later (Server.AwaitTask, Server.CancelTask by ID, also from another process for
// HTTP servers, which keep tasks beyond a session). Every string in it comes from the
// server: untrusted text (bounded to a few KB by the bridge).
type Task struct {
	// ID is the server's task ID.
	ID string `json:"id"`
	// Server is the server's ID (ServerConfig.ID).
	Server string `json:"server"`
	// Tool is the tool's name on the server; "" for a task known only by its ID.
	Tool string `json:"tool,omitempty"`
	// Status and StatusMessage are the task's state and the server's description of it.
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are the server's timestamps (zero when missing or not
	// RFC 3339).
	CreatedAt     time.Time `json:"createdAt,omitzero"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt,omitzero"`
	// TTL is how long after its creation the server keeps the task; 0 when unlimited or not
	// said.
	TTL time.Duration `json:"ttl,omitempty"`
	// PollInterval is the server's suggested time between polls, as sent (the bridge bounds
	// what it honours); 0 when not said.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Result is the tool's result when the server delivered it with the state: a completed
	// task under 2026-07-28 (tasks/get carries the result), or a call that StartTask
	// started and the server answered at once, without a task (ID is then ""). nil
	// otherwise; Server.AwaitTask fetches it.
	Result *mcp.CallToolResult `json:"-"`
}

// Errors of tasks, wrapped by a *TaskError (match with errors.Is).
var (
	// ErrTaskFailed: the task ended in status failed; TaskError.Err holds the JSON-RPC error
	// the server gave for it, when it gave one. (A tool's own failure, isError, is a result
	// and comes as a *results.ToolError like for any call.)
	ErrTaskFailed = errors.New("task failed")
	// ErrTaskCancelled: the task ended in status cancelled, by the server or on request.
	ErrTaskCancelled = errors.New("task cancelled")
	// ErrTaskExpired: the task outlived its TTL before ending, or the server no longer
	// knows it after the TTL passed.
	ErrTaskExpired = errors.New("task expired")
	// ErrUnknownTask: the server does not know the task ID (it never had it, or dropped
	// it), or answered about a task other than the one asked about.
	ErrUnknownTask = errors.New("unknown task")
)

// TaskError is the error of a task that did not deliver a result. A Handler returns it
// wrapped in a *ServerError, like every failure that is not the tool's own.
type TaskError struct {
	// TaskID is the server's task ID.
	TaskID string
	// Status is the last status the server reported ("" when none was seen).
	Status TaskStatus
	// Message is the server's statusMessage, if any (untrusted text).
	Message string
	// Kind is ErrTaskFailed, ErrTaskCancelled, ErrTaskExpired or ErrUnknownTask.
	Kind error
	// Err is the cause when there is one: for a failed task the server's JSON-RPC error
	// (a *jsonrpc.Error).
	Err error
}

// Error says which task ended how, with the server's message and the cause.
func (e *TaskError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %q: %v", e.TaskID, e.Kind)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns Kind and the cause, for errors.Is and errors.As.
func (e *TaskError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

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

// PollTask asks the server once for the state of task id (tasks/get). A task that ended
// is returned like any other (its status says how); the error is for a failed request,
// ErrUnknownTask (in a *TaskError) when the server does not know the ID.
func (s *Server) PollTask(ctx context.Context, id string) (Task, error) {
	if err := checkTaskID(id); err != nil {
		return Task{}, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	run := s.newRun(ctx, nil, "", id, flavourUnknown)
	t, err := run.poll(ctx)
	if err != nil {
		return Task{}, run.fail(err)
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
	if err := checkTaskID(id); err != nil {
		return nil, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	run := s.newRun(ctx, nil, "", id, flavourUnknown)
	return s.runTask(ctx, run, s.taskTimeout())
}

// CancelTask asks the server to cancel task id (tasks/cancel). Cancellation is
// cooperative: the task may still complete. Cancelling a task that already ended is an
// error from the server under 2025-11-25.
func (s *Server) CancelTask(ctx context.Context, id string) error {
	if err := checkTaskID(id); err != nil {
		return &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	run := s.newRun(ctx, nil, "", id, flavourUnknown)
	if err := run.cancelRequest(ctx); err != nil {
		return run.fail(err)
	}
	return nil
}

// taskMode is the server's task mode: its own, else the Options', else auto.
func (s *Server) taskMode() TaskMode {
	switch {
	case s.cfg.Tasks != "":
		return s.cfg.Tasks
	case s.opts.Tasks != "":
		return s.opts.Tasks
	}
	return TasksAuto
}

// taskTimeout bounds a call that runs as a task.
func (s *Server) taskTimeout() time.Duration {
	switch {
	case s.cfg.TaskTimeout > 0:
		return s.cfg.TaskTimeout
	case s.opts.TaskTimeout > 0:
		return s.opts.TaskTimeout
	}
	return DefaultTaskTimeout
}

// callBudget is the time a call of the server's tool remote may take in all: the call
// timeout, or the task timeout when the call may run as a task (task: a tool that runs as
// one under 2025-11-25, any tool of a server that offers the 2026-07-28 extension). Each
// request of the call stays bounded by the call timeout.
func (s *Server) callBudget(remote string) (budget time.Duration, task bool) {
	call := s.opts.callTimeout(s.cfg)
	if s.taskMode() == TasksNever {
		return call, false
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return call, false
	}
	caps := sess.taskCaps
	if caps.extension {
		return max(call, s.taskTimeout()), true
	}
	if !caps.toolsCall {
		return call, false
	}
	s.catMu.Lock()
	rt := s.remote[remote]
	s.catMu.Unlock()
	if rt != nil && (rt.taskSupport == "required" || (rt.taskSupport == "optional" && s.taskMode() == TasksAlways)) {
		return max(call, s.taskTimeout()), true
	}
	return call, false
}

// TaskTool is a tool that declares MCP task support (ServerStatus.TaskTools).
type TaskTool struct {
	// Tool is the tool's name on the server.
	Tool string `json:"tool"`
	// Support is its execution.taskSupport: "required" (it only runs as a task) or
	// "optional" (it runs as one with tasks: always, or through StartTask).
	Support string `json:"support"`
}

// taskTools lists the tools of a listing that declare task support, by name.
func taskTools(remote map[string]*remoteTool) []TaskTool {
	var out []TaskTool
	for name, rt := range remote {
		if !rt.gone && (rt.taskSupport == "required" || rt.taskSupport == "optional") {
			out = append(out, TaskTool{Tool: name, Support: rt.taskSupport})
		}
	}
	slices.SortFunc(out, func(a, b TaskTool) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// checkTaskID refuses IDs no server can have issued: empty, oversized, not UTF-8.
func checkTaskID(id string) error {
	if id == "" || len(id) > maxTaskIDBytes || !validText(id) {
		return fmt.Errorf("task ID %s: %w", redact.Quote(id, 64), ErrUnknownTask)
	}
	return nil
}
