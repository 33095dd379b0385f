package tasks

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Status is the state of an MCP task (bridge.TaskStatus, which aliases it).
type Status string

// The task states. Completed, failed and cancelled are terminal.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether the task can no longer change: completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

func (s Status) known() bool {
	return s == Working || s == InputRequired || s.Terminal()
}

// Task is an MCP task as last seen: what Server.StartTask and Server.PollTask return and
// what Options.OnTaskStatus receives (bridge.Task, which aliases it). Its JSON form is what
// a host persists to resume the task later (Server.AwaitTask, Server.CancelTask by ID, also
// from another process for HTTP servers, which keep tasks beyond a session). Every string
// in it comes from the server: untrusted text (bounded to a few KB by the bridge).
type Task struct {
	// ID is the server's task ID.
	ID string `json:"id"`
	// Server is the server's ID (ServerConfig.ID).
	Server string `json:"server"`
	// Tool is the tool's name on the server; "" for a task known only by its ID.
	Tool string `json:"tool,omitempty"`
	// Status and StatusMessage are the task's state and the server's description of it.
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
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

// Errors of tasks, wrapped by an *Error (match with errors.Is); bridge re-exports them.
var (
	// ErrFailed: the task ended in status failed; Error.Err holds the JSON-RPC error
	// the server gave for it, when it gave one. (A tool's own failure, isError, is a result
	// and comes as a *results.ToolError like for any call.)
	ErrFailed = errors.New("task failed")
	// ErrCancelled: the task ended in status cancelled, by the server or on request.
	ErrCancelled = errors.New("task cancelled")
	// ErrExpired: the task outlived its TTL before ending, or the server no longer
	// knows it after the TTL passed.
	ErrExpired = errors.New("task expired")
	// ErrUnknown: the server does not know the task ID (it never had it, or dropped
	// it), or answered about a task other than the one asked about.
	ErrUnknown = errors.New("unknown task")
	// ErrLost: the server process that ran the task exited (a stdio server): the process
	// started since cannot know the task, so it is not asked.
	ErrLost = errors.New("task lost with the server process")
)

// Error is the error of a task that did not deliver a result (bridge.TaskError, which
// aliases it). A Handler returns it wrapped in a *ServerError, like every failure that is
// not the tool's own.
type Error struct {
	// TaskID is the server's task ID.
	TaskID string
	// Status is the last status the server reported ("" when none was seen).
	Status Status
	// Message is the server's statusMessage, if any (untrusted text).
	Message string
	// Kind is ErrFailed, ErrCancelled, ErrExpired, ErrUnknown or ErrLost
	// (bridge.ErrTaskFailed, ...).
	Kind error
	// Err is the cause when there is one: for a failed task the server's JSON-RPC error
	// (a *jsonrpc.Error).
	Err error
}

// Error says which task ended how, with the server's message and the cause.
func (e *Error) Error() string {
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
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}
