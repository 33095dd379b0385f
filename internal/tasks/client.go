package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// Requester is what a Client needs of the session layer: one request on the server's live
// session, and what that session offers.
type Requester interface {
	// Request sends one task method (method, params) on the live session (redialled when
	// dead: a task may outlive a session on HTTP servers), bounded by timeout (and the
	// server's life), and returns the raw result and the flavour the session speaks. what
	// names the request in errors. The error is returned to the caller as it is.
	Request(ctx context.Context, timeout time.Duration, what, method string, params *Params) (json.RawMessage, Flavour, error)
	// Live returns the live session's task offer and flavour; ok is false when there is no
	// live session.
	Live() (caps Caps, f Flavour, ok bool)
}

// Config is one server's task settings and the host's hooks.
type Config struct {
	// Server is the server's ID, for Task.Server.
	Server string
	// Mode is the server's task mode (auto when "").
	Mode Mode
	// CallTimeout bounds each request of a task; TaskTimeout is the TTL asked for and
	// bounds tasks/result when ctx has no deadline.
	CallTimeout, TaskTimeout time.Duration
	// Log receives debug lines (never written under a lock).
	Log *slog.Logger
	// Requester sends the task methods.
	Requester Requester
	// Ask answers one elicitation of task taskID once it was checked (the host's
	// callback); nil when the host answers none.
	Ask func(ctx context.Context, taskID string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// Gone reports whether the server process behind session origin (as given to Created)
	// has ended, so that a task it created is lost with it (ErrLost, with cause), and the
	// process started since is not asked about it; nil: tasks outlive sessions.
	Gone func(origin any) (gone bool, cause error)
	// Subscribe asks the server behind session origin (as given to Created) for the status
	// notifications of extension task taskID (subscriptions/listen) until stop; nil: none
	// are asked for. Notifications come back through Client.Notified.
	Subscribe func(origin any, taskID string) (stop func())
}

// Client is the tasks protocol client of one server: its policy (which calls run as tasks,
// for how long) and the tasks it follows.
//
// Its mutex guards the table of tasks in flight; it is a leaf of the host's lock order:
// nothing is logged or called out while it is held.
type Client struct {
	cfg Config

	mu         sync.Mutex
	runs       map[string]*Run
	recent     []string // IDs of tasks created recently on recentSess (a ring of MaxRecentTasks)
	next       int
	recentSess any     // a new session (a restarted server may count from 1 again) starts afresh
	early      []early // notified states of tasks not followed yet (notify.go)
}

// New returns the client of one server.
func New(cfg Config) *Client {
	if cfg.Mode == "" {
		cfg.Mode = Auto
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Client{cfg: cfg}
}

// HeldLocks names the client's locks that some goroutine holds now, for the host's tests
// of the lock order (nothing holds one while logging or calling out).
func (c *Client) HeldLocks() []string {
	if c.mu.TryLock() {
		c.mu.Unlock()
		return nil
	}
	return []string{"tasks.Client.mu"}
}

// Mode is the server's task mode.
func (c *Client) Mode() Mode { return c.cfg.Mode }

// Timeout is the server's task timeout.
func (c *Client) Timeout() time.Duration { return c.cfg.TaskTimeout }

// Runs reports whether a tools/call of a tool whose execution.taskSupport is support would
// run as a task on a session offering caps: any call under the extension, under 2025-11-25
// a tool that requires it, or allows it with mode always.
func (c *Client) Runs(caps Caps, support string) bool {
	switch {
	case c.cfg.Mode == Never:
		return false
	case caps.Extension:
		return true
	case !caps.ToolsCall:
		return false
	}
	return support == "required" || (support == "optional" && c.cfg.Mode == Always)
}

// Budget is the time a call of a tool may take in all: the call timeout, or (task true)
// the task timeout when the call may run as a task on a session offering caps (ok false:
// no live session); support returns the tool's execution.taskSupport, asked only when it
// matters. Each request of the call stays bounded by the call timeout.
func (c *Client) Budget(call time.Duration, caps Caps, ok bool, support func() string) (budget time.Duration, task bool) {
	switch {
	case !ok || c.cfg.Mode == Never || !(caps.Extension || caps.ToolsCall):
		return call, false
	case caps.Extension || c.Runs(caps, support()):
		return max(call, c.cfg.TaskTimeout), true
	}
	return call, false
}

// Tap says how to send a tools/call of a tool (execution.taskSupport support, label for
// errors) on a session offering caps: tap false for a plain call; otherwise the call's
// result is kept when IsHandle, and param, when not nil, is the "task" member to add to its
// params (2025-11-25). force (a host's StartTask) asks for a task.
func (c *Client) Tap(caps Caps, support, label string, force bool) (param json.RawMessage, tap bool, err error) {
	switch {
	case c.cfg.Mode == Never:
		if force {
			return nil, false, errors.New("tasks are off for this server (tasks: never)")
		}
		return nil, false, nil
	case caps.Extension:
		return nil, true, nil
	case !caps.ToolsCall:
		if force {
			return nil, false, errors.New("the server does not offer tools/call as a task (capabilities.tasks.requests.tools.call)")
		}
		return nil, false, nil
	}
	switch support {
	case "required":
	case "optional":
		if c.cfg.Mode != Always && !force {
			return nil, false, nil
		}
	default:
		if force {
			if support == "" {
				support = "absent"
			}
			return nil, false, fmt.Errorf("%s does not run as a task (execution.taskSupport %s)", label, redact.Quote(support, 64))
		}
		return nil, false, nil
	}
	ttl := strconv.FormatInt(c.cfg.TaskTimeout.Milliseconds(), 10)
	return json.RawMessage(`{"ttl":` + ttl + `}`), true, nil
}

// CallTap returns the tap for a tools/call of a tool with execution.taskSupport support
// (label names it in errors) on a session offering caps that may become a task: it adds the
// task member under 2025-11-25 and keeps a task handle instead of decoding it, on either
// path. It returns nil for a plain call; force (StartTask) asks for a task.
func (c *Client) CallTap(caps Caps, support, label string, force bool) (*wire.Tap, error) {
	param, tap, err := c.Tap(caps, support, label, force)
	if !tap || err != nil {
		return nil, err
	}
	if param == nil {
		return &wire.Tap{Method: "tools/call", Keep: IsHandle}, nil
	}
	return &wire.Tap{Method: "tools/call", Param: "task", Value: param, Keep: IsHandle}, nil
}

// Tool is a tool that declares MCP task support (bridge.TaskTool).
type Tool struct {
	// Tool is the tool's name on the server.
	Tool string `json:"tool"`
	// Support is its execution.taskSupport: "required" (it only runs as a task) or
	// "optional" (it runs as one with tasks: always, or through StartTask).
	Support string `json:"support"`
}

// RequiredProblem says why a tool whose execution.taskSupport is "required" cannot be
// offered on a session with caps: "" when it can.
func (c *Client) RequiredProblem(caps Caps) string {
	switch {
	case c.cfg.Mode == Never:
		return `execution.taskSupport is "required": the tool can only run as an MCP task, and tasks are off for this server (tasks: never)`
	case caps.Extension || caps.ToolsCall:
		return ""
	}
	return `execution.taskSupport is "required", but the server does not offer tools/call as a task (capabilities.tasks.requests.tools.call)`
}

// errReusedID explains a task ID the server handed out twice.
var errReusedID = errors.New("the server handed out this task ID for a new task while it still names another one (task IDs must be unique)")

// add registers r. created says the server just created the task: its ID must be new. A
// status notification that came before is left in r.early for Await.
func (c *Client) add(r *Run, created bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.runs[r.id]; dup {
		if created {
			return &Error{TaskID: r.id, Kind: ErrUnknown, Err: errReusedID}
		}
		return fmt.Errorf("task %s is already being awaited by another call", redact.Quote(r.id, 64))
	}
	if created {
		if err := c.created(r.id, r.sess); err != nil {
			return err
		}
	}
	if c.runs == nil {
		c.runs = make(map[string]*Run)
	}
	c.runs[r.id] = r
	if r.sess != nil {
		r.early, r.hasEarly = c.takeEarly(r.sess, r.id) // notified before it was followed (notify.go)
	}
	return nil
}

// created records the ID of a task sess's server just created; one it created recently is
// an error. c.mu is held.
func (c *Client) created(id string, sess any) error {
	if sess != c.recentSess {
		c.recent, c.next, c.recentSess = c.recent[:0], 0, sess
	}
	if slices.Contains(c.recent, id) {
		return &Error{TaskID: id, Kind: ErrUnknown, Err: errReusedID}
	}
	if len(c.recent) < MaxRecentTasks {
		c.recent = append(c.recent, id)
	} else {
		c.recent[c.next] = id
		c.next = (c.next + 1) % MaxRecentTasks
	}
	return nil
}

// NoteCreated records the ID of a task the client does not follow (a host's StartTask).
func (c *Client) NoteCreated(r *Run) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.runs[r.id]; dup {
		return &Error{TaskID: r.id, Kind: ErrUnknown, Err: errReusedID}
	}
	return c.created(r.id, r.sess)
}

// CreatedOn returns the session (as given to Created) on which the server created task id,
// when the client knows it: a task it follows, or one of the tasks recently created on the
// session that created the last one.
func (c *Client) CreatedOn(id string) (sess any, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.runs[id]; r != nil && r.sess != nil {
		return r.sess, true
	}
	if c.recentSess != nil && slices.Contains(c.recent, id) {
		return c.recentSess, true
	}
	return nil, false
}

func (c *Client) remove(r *Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs[r.id] == r {
		delete(c.runs, r.id)
	}
}

func (c *Client) get(id string) *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

// ElicitContext returns the context and task ID for a server's elicitation/create with
// metadata meta: one that names a task (related-task metadata, 2025-11-25 tasks/result)
// runs under the context of the call following that task; one naming a task the client
// does not follow is refused with a JSON-RPC error for the server.
func (c *Client) ElicitContext(ctx context.Context, meta map[string]any) (context.Context, string, error) {
	id := relatedTask(meta)
	if id == "" {
		return ctx, "", nil
	}
	run := c.get(id)
	if run == nil {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task " + redact.Quote(id, 64) + " is waiting for input"}
	}
	return run.Context(), id, nil
}
