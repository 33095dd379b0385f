package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// The wire side of MCP tasks: the two versions' shapes, read leniently and bounded.
//
// 2025-11-25 (basic/utilities/tasks): tools/call params gain "task": {"ttl": ms}; the answer
// is a CreateTaskResult {"task": Task}; Task has ttl and pollInterval (ms); tasks/get returns
// a Task; tasks/result blocks until the task ended and returns the tool's result (or its
// JSON-RPC error), delivering the server's requests (elicitation/create with
// _meta["io.modelcontextprotocol/related-task"]) on the way; tasks/cancel returns the Task.
// The server offers tasks in capabilities.tasks.requests.tools.call and each tool in
// execution.taskSupport. The client's own capabilities.tasks says which requests it would
// run as tasks itself (sampling, elicitation): the bridge runs none, so it declares none.
//
// io.modelcontextprotocol/tasks (2026-07-28 extension): the client declares the extension in
// its capabilities (go-sdk sends them in every request's _meta); any tools/call may then be
// answered with {"resultType": "task", ...Task}; Task has ttlMs and pollIntervalMs;
// tasks/get returns the Task with the result, error or inputRequests inline; tasks/update
// sends inputResponses; tasks/cancel is an empty acknowledgement.

const (
	// Extension is the name of the tasks extension (2026-07-28), in capabilities.extensions.
	Extension      = "io.modelcontextprotocol/tasks"
	relatedTaskKey = "io.modelcontextprotocol/related-task"

	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksCancel = "tasks/cancel"
	methodTasksUpdate = "tasks/update"
)

// Flavour is which version's task protocol a task (or a session) speaks.
type Flavour int

// The flavours.
const (
	FlavourUnknown Flavour = iota // a task known by ID only: decided by the session's version
	Flavour2025                   // 2025-11-25 experimental tasks
	FlavourExt                    // the 2026-07-28 tasks extension
)

// String names the Flavour's version.
func (f Flavour) String() string {
	switch f {
	case Flavour2025:
		return "2025-11-25"
	case FlavourExt:
		return Extension
	}
	return "unknown"
}

// Caps is what a session's server offers for tasks.
type Caps struct {
	ToolsCall bool // 2025-11-25: capabilities.tasks.requests.tools.call
	Cancel    bool // 2025-11-25: capabilities.tasks.cancel
	Extension bool // the io.modelcontextprotocol/tasks extension (2026-07-28)
}

// String describes the offer for ServerStatus.Tasks.
func (c Caps) String() string {
	switch {
	case c.Extension:
		return "extension " + Extension
	case c.ToolsCall && c.Cancel:
		return "2025-11-25 tasks (tools/call, cancel)"
	case c.ToolsCall:
		return "2025-11-25 tasks (tools/call)"
	}
	return ""
}

// ReadCaps reads the server's task offer from the raw initialize result (2025-11-25; go-sdk's
// ServerCapabilities drops its "tasks") and the decoded capabilities (the extension, read
// only when modern: the session speaks 2026-07-28, from server/discover).
func ReadCaps(rawInit json.RawMessage, ir *mcp.InitializeResult, modern bool) Caps {
	var c Caps
	if ir != nil && ir.Capabilities != nil && modern {
		_, c.Extension = ir.Capabilities.Extensions[Extension]
	}
	var wire struct {
		Capabilities struct {
			Tasks *struct {
				Cancel   json.RawMessage `json:"cancel"`
				Requests struct {
					Tools struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if len(rawInit) > 0 && json.Unmarshal(rawInit, &wire) == nil && wire.Capabilities.Tasks != nil {
		t := wire.Capabilities.Tasks
		c.ToolsCall = present(t.Requests.Tools.Call)
		c.Cancel = present(t.Cancel)
	}
	return c
}

// present reports whether a capability member is there (any value but null).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// wireTask is a Task in either version's spelling, with the extension's inline fields.
type wireTask struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTL            json.RawMessage `json:"ttl"`
	TTLMs          json.RawMessage `json:"ttlMs"`
	PollInterval   json.RawMessage `json:"pollInterval"`
	PollIntervalMs json.RawMessage `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
	InputRequests  json.RawMessage `json:"inputRequests"`
}

// state is a parsed, checked Task.
type state struct {
	Task
	pollGiven     bool            // the server gave a pollInterval (0 included)
	fromGet       bool            // a tasks/get answer (it carries a terminal task's outcome)
	result        json.RawMessage // extension: the inline result of a completed task
	rpcErr        *jsonrpc.Error  // extension: the inline error of a failed task
	inputRequests json.RawMessage // extension: the outstanding requests of input_required
}

// IsHandle reports whether a tools/call result is a task handle rather than a result: a
// 2025-11-25 CreateTaskResult ({"task": {...}}) or an extension one ({"resultType":"task"}).
// It is the Keep of the tools/call tap, so ordinary results are never copied.
func IsHandle(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"task`)) {
		return false
	}
	var head struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"`
	}
	if json.Unmarshal(result, &head) != nil {
		return false
	}
	return head.ResultType == "task" || (present(head.Task) && bytes.HasPrefix(bytes.TrimSpace(head.Task), []byte("{")))
}

// parseCreate reads a task handle: the task and the version its shape says.
func parseCreate(raw json.RawMessage) (state, Flavour, error) {
	var head struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return state{}, FlavourUnknown, fmt.Errorf("task handle is not a JSON object: %w", err)
	}
	if head.ResultType == "task" {
		st, err := parseTask(raw, FlavourExt)
		return st, FlavourExt, err
	}
	st, err := parseTask(head.Task, Flavour2025)
	return st, Flavour2025, err
}

// parseTask reads and checks a Task (a tasks/get result, a CreateTaskResult's task).
func parseTask(raw json.RawMessage, f Flavour) (state, error) {
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return state{}, fmt.Errorf("task is not a JSON object: %w", err)
	}
	if err := CheckID(w.TaskID); err != nil {
		return state{}, fmt.Errorf("the server sent an unusable task ID: %w", err)
	}
	st := state{Task: Task{
		ID:            w.TaskID,
		Status:        Status(w.Status),
		StatusMessage: redact.Clean(w.StatusMessage, MaxStatusMsgBytes),
		CreatedAt:     parseTime(w.CreatedAt),
		LastUpdatedAt: parseTime(w.LastUpdatedAt),
	}}
	if !st.Status.known() {
		return state{}, fmt.Errorf("task %q has unknown status %s", w.TaskID, redact.Quote(w.Status, 64))
	}
	ttl, poll := w.TTL, w.PollInterval
	if f == FlavourExt || (len(ttl) == 0 && len(poll) == 0) {
		ttl, poll = firstPresent(w.TTLMs, w.TTL), firstPresent(w.PollIntervalMs, w.PollInterval)
	}
	st.TTL, _ = millis(ttl)
	st.PollInterval, st.pollGiven = millis(poll)
	if present(w.Result) {
		st.result = w.Result
	}
	if present(w.InputRequests) {
		st.inputRequests = w.InputRequests
	}
	if present(w.Error) {
		var je jsonrpc.Error
		if json.Unmarshal(w.Error, &je) == nil {
			je.Message = redact.Clean(je.Message, MaxStatusMsgBytes)
			st.rpcErr = &je
		} else {
			st.rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server sent an error that is not a JSON-RPC error object"}
		}
	}
	return st, nil
}

func firstPresent(a, b json.RawMessage) json.RawMessage {
	if len(a) > 0 {
		return a
	}
	return b
}

// millis reads a millisecond count, capped at MaxDuration; ok is false when raw is absent,
// null, negative or not a number.
func millis(raw json.RawMessage) (d time.Duration, ok bool) {
	if len(raw) == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f >= float64(MaxDuration/time.Millisecond) {
		return MaxDuration, true
	}
	return time.Duration(f * float64(time.Millisecond)), true
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// validText reports whether s is valid UTF-8 without control characters.
func validText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// relatedTask returns the task ID of a message's io.modelcontextprotocol/related-task
// metadata, or "".
func relatedTask(meta map[string]any) string {
	v, ok := meta[relatedTaskKey].(map[string]any)
	if !ok {
		return ""
	}
	id, _ := v["taskId"].(string)
	return id
}

// Params are the params of tasks/get, tasks/result, tasks/cancel and tasks/update.
type Params struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// rawResult keeps a result's bytes as the server sent them: go-sdk's custom-method call
// decodes into it.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

// UnmarshalJSON keeps a copy of b.
func (r *rawResult) UnmarshalJSON(b []byte) error {
	r.raw = append(json.RawMessage(nil), b...)
	return nil
}

// RegisterMethods lets the client send the task methods (go-sdk knows none of them).
func RegisterMethods(c *mcp.Client) error {
	for _, m := range []string{methodTasksGet, methodTasksResult, methodTasksCancel, methodTasksUpdate} {
		if err := mcp.AddSendingCustomMethod[*Params, *rawResult](c, m); err != nil {
			return err
		}
	}
	return nil
}

// Send sends one task method on cs and returns its result as the server sent it.
func Send(ctx context.Context, cs *mcp.ClientSession, method string, params *Params) (json.RawMessage, error) {
	res, err := mcp.CallCustomMethod[*Params, *rawResult](ctx, cs, method, params)
	if err != nil {
		return nil, err
	}
	return res.raw, nil
}

// decodeToolResult decodes a tool's result the way go-sdk decodes tools/call's.
func decodeToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the task's result is not a tool result: %w", err)
	}
	return &res, nil
}

// isNotFound reports whether a tasks/* request failed because the server does not know the
// task: -32602 (invalid params) is what both versions specify for an unknown or expired
// task ID.
func isNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeInvalidParams
}

// CheckID refuses IDs no server can have issued: empty, oversized, not UTF-8.
func CheckID(id string) error {
	if id == "" || len(id) > MaxIDBytes || !validText(id) {
		return fmt.Errorf("task ID %s: %w", redact.Quote(id, 64), ErrUnknown)
	}
	return nil
}
