package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// The task lifecycle: create (a tools/call the server answers with a task handle), poll
// tasks/get at the server's pollInterval (bounded both ways; backing off when it gives
// none), answer input (2025-11-25: tasks/result delivers elicitation/create; extension:
// inputRequests answered with tasks/update), fetch the result (tasks/result, or inline), and
// cancel (tasks/cancel) when the caller gives up. Everything the server says is untrusted:
// IDs, states, intervals, TTLs, input requests and results are checked and bounded.

// Run is one task a Client follows (or asks about once, by ID).
type Run struct {
	c     *Client
	tool  string // the tool's name on the server; "" when unknown
	id    string
	label string // for errors: `tool "x": task "id"` or `task "id"`
	// observe is told each state whose status or message changed (the host's callbacks).
	observe func(context.Context, Task)
	fresh   bool // the server just created the task (its ID must be new)
	sess    any  // the session that created it (fresh tasks)
	// answeredOther is set when the server answered about another task than this one: the
	// ID is still ours, so giving up cancels it.
	answeredOther atomic.Bool
	// wake is signalled when a status notification gave the task a state (noted).
	wake chan struct{}
	// early is the notified state of the task from before Await followed it (hasEarly).
	early    early
	hasEarly bool

	mu       sync.Mutex      // guards the fields below (the 2025 result fetch polls alongside)
	ctx      context.Context // the follower's context: input requests for the task run under it
	flav     Flavour
	created  time.Time // when the client learnt of the task (its clock, not the server's)
	last     state
	seen     bool
	answered map[string]bool // extension: inputRequests keys answered
	noted    *state          // the state a status notification gave, not yet acted on (notify.go)
	// structured is the structuredContent of the result Await returned, as the server sent it.
	structured json.RawMessage
}

// NewRun starts following task id of tool ("" when unknown) under ctx; f is
// FlavourUnknown for a task known only by its ID. observe, when not nil, is told each
// state whose status or message changed, with Server and Tool set.
func (c *Client) NewRun(ctx context.Context, tool, id string, f Flavour, observe func(context.Context, Task)) *Run {
	r := &Run{c: c, tool: tool, id: id, ctx: ctx, flav: f, created: time.Now(), observe: observe, wake: make(chan struct{}, 1)}
	if tool != "" {
		r.label = fmt.Sprintf("tool %q: task %s", tool, redact.Quote(id, 64))
	} else {
		r.label = "task " + redact.Quote(id, 64)
	}
	return r
}

// Created reads the task handle raw that a tools/call of tool answered with on session
// sess (any value that identifies it) and returns the run following the new task, which
// has observed the handle's state.
func (c *Client) Created(ctx context.Context, tool string, raw json.RawMessage, sess any, observe func(context.Context, Task)) (*Run, error) {
	st, f, err := parseCreate(raw)
	if err != nil {
		return nil, fmt.Errorf("the server answered with a task handle that is not usable: %w", err)
	}
	r := c.NewRun(ctx, tool, st.ID, f, observe)
	r.fresh, r.sess = true, sess
	r.record(ctx, st)
	return r, nil
}

// ID is the server's task ID.
func (r *Run) ID() string { return r.id }

// Tool is the tool's name on the server; "" for a task known only by its ID.
func (r *Run) Tool() string { return r.tool }

// Label names the task (and its tool) in errors.
func (r *Run) Label() string { return r.label }

// Context is the follower's context: input requests for the task run under it.
func (r *Run) Context() context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctx
}

// Task is the task as last seen, with Server and Tool set.
func (r *Run) Task() Task {
	st, _, _ := r.state()
	t := st.Task
	t.Server, t.Tool = r.c.cfg.Server, r.tool
	return t
}

// state returns the last state seen and the flavour.
func (r *Run) state() (state, Flavour, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.flav, r.seen
}

// taskErr builds the error of a task that ended without a result.
func (r *Run) taskErr(kind, cause error) error {
	st, _, _ := r.state()
	return &Error{TaskID: r.id, Status: st.Status, Message: st.StatusMessage, Kind: kind, Err: cause}
}

// record keeps a state the server reported and tells observe when the status or its
// message changed.
func (r *Run) record(ctx context.Context, st state) {
	r.mu.Lock()
	changed := !r.seen || st.Status != r.last.Status || st.StatusMessage != r.last.StatusMessage
	r.last, r.seen = st, true
	r.mu.Unlock()
	if !changed {
		return
	}
	t := st.Task
	t.Server, t.Tool = r.c.cfg.Server, r.tool
	r.c.cfg.Log.Debug("task status", "tool", r.tool, "task", r.id, "status", string(t.Status))
	if r.observe != nil {
		r.observe(ctx, t)
	}
}

// Await follows r to its end under ctx, which the caller bounds (the task timeout, the
// server's life), and returns the tool's result. When it gives up on a task that has not
// ended, it cancels the task on the server. Errors are as the Requester gave them, the
// task's own (*Error), or others to be labelled with r.Label.
func (c *Client) Await(ctx context.Context, r *Run) (*mcp.CallToolResult, error) {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	if err := c.add(r, r.fresh); err != nil {
		return nil, err
	}
	defer c.remove(r)
	if r.hasEarly {
		r.note(r.early.f, r.early.st, true)
	}
	if _, f, _ := r.state(); f == FlavourExt && r.sess != nil && c.cfg.Subscribe != nil {
		stop := c.cfg.Subscribe(r.sess, r.id) // its status notifications (notify.go)
		defer stop()
	}
	res, err := r.follow(ctx)
	if err == nil {
		return res, nil
	}
	// Giving up on a task that has not ended (the caller left, a bound was hit, the server
	// misbehaved): cancel it, unless its ID may be another call's (the server does not know
	// it); a server that answered about another task still has ours.
	if st, _, _ := r.state(); !st.Status.Terminal() && !errors.Is(err, ErrLost) && (!errors.Is(err, ErrUnknown) || r.answeredOther.Load()) {
		r.cancelQuietly(ctx)
	}
	return nil, err
}

// cancelQuietly sends tasks/cancel for a task the client gives up on (best effort, bounded,
// even though ctx has ended).
func (r *Run) cancelQuietly(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CancelWait)
	defer cancel()
	if err := r.Cancel(cctx); err != nil {
		r.c.cfg.Log.Debug("tasks/cancel failed", "tool", r.tool, "task", r.id, "err", err)
	}
}

// follow polls the task until it ends and returns its result.
func (r *Run) follow(ctx context.Context) (*mcp.CallToolResult, error) {
	unchanged := 0
	failures := 0
	var due time.Time // when the next poll is; zero: not set yet
	for {
		st, f, seen := r.state()
		if seen {
			if res, done, err := r.step(ctx, st, f); done {
				return res, err
			}
			if err := r.expired(); err != nil {
				return nil, err
			}
			// A handle that says the task ended carries no outcome (extension): fetch it at
			// once. Otherwise wait for the next poll.
			// A notified state is acted on at once; the poll stays when it was due.
			if !(f == FlavourExt && st.Status.Terminal() && !st.fromGet) {
				if due.IsZero() {
					due = time.Now().Add(r.interval(unchanged))
				}
				woke, err := r.sleep(ctx, due)
				if err != nil {
					return nil, err
				}
				if woke {
					continue
				}
			}
		}
		due = time.Time{}
		next, err := r.Poll(ctx)
		switch {
		case err == nil:
			failures = 0
			if seen && next.Status == st.Status && next.StatusMessage == st.StatusMessage {
				unchanged++
			} else {
				unchanged = 0
			}
		case ctx.Err() != nil:
			return nil, err
		case errors.Is(err, ErrUnknown), errors.Is(err, ErrExpired):
			return nil, err
		default:
			if failures++; failures >= MaxPollFailures {
				return nil, fmt.Errorf("%d polls in a row failed: %w", failures, err)
			}
			r.c.cfg.Log.Debug("tasks/get failed; polling again", "tool", r.tool, "task", r.id, "err", err)
		}
	}
}

// step acts on a state: done reports that the task's outcome is known (res or err).
func (r *Run) step(ctx context.Context, st state, f Flavour) (res *mcp.CallToolResult, done bool, err error) {
	if st.Status == Cancelled {
		return nil, true, r.taskErr(ErrCancelled, nil)
	}
	if f == Flavour2025 {
		if st.Status == Working {
			return nil, false, nil
		}
		// input_required: tasks/result delivers the server's requests and blocks until the
		// end; completed, failed: it returns the outcome.
		res, err := r.result2025(ctx)
		return res, true, err
	}
	if st.Status.Terminal() && !st.fromGet {
		return nil, false, nil // a handle: tasks/get carries the outcome
	}
	switch st.Status {
	case Completed:
		if st.result == nil {
			return nil, true, r.taskErr(ErrFailed, errors.New("the server reported the task completed without its result"))
		}
		res, err := r.outcome(st.result)
		return res, true, err
	case Failed:
		var cause error
		if st.rpcErr != nil {
			cause = st.rpcErr
		}
		return nil, true, r.taskErr(ErrFailed, cause)
	case InputRequired:
		if err := r.answer(ctx, st.inputRequests); err != nil {
			return nil, true, err
		}
	}
	return nil, false, nil
}

// expired reports a task that outlived the TTL the server gave it, by the client's clock.
func (r *Run) expired() error {
	st, _, _ := r.state()
	r.mu.Lock()
	created := r.created
	r.mu.Unlock()
	if st.TTL > 0 && !st.Status.Terminal() && time.Since(created) > st.TTL+MaxPollInterval {
		return r.taskErr(ErrExpired, fmt.Errorf("still %s %s after its TTL of %s", st.Status, time.Since(created).Round(time.Second), st.TTL))
	}
	return nil
}

// interval is the wait before the next poll.
func (r *Run) interval(unchanged int) time.Duration {
	st, _, _ := r.state()
	if st.pollGiven {
		return min(max(st.PollInterval, MinPollInterval), MaxPollInterval)
	}
	d := FirstPoll
	for i := 0; i < unchanged && d < MaxBackoffPoll; i++ {
		d += d / 2
	}
	return min(d, MaxBackoffPoll)
}

// wait sleeps d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// request sends one tasks/* request for the task, bounded by the call timeout, and returns
// the raw result and the session's flavour.
func (r *Run) request(ctx context.Context, method string, params *Params) (json.RawMessage, Flavour, error) {
	raw, f, err := r.requestWithin(ctx, r.c.cfg.CallTimeout, method, params)
	if err != nil && isNotFound(err) {
		return nil, f, r.notFound(err)
	}
	return raw, f, err
}

func (r *Run) requestWithin(ctx context.Context, timeout time.Duration, method string, params *Params) (json.RawMessage, Flavour, error) {
	if gone, cause := r.gone(); gone { // not asked: the process started since cannot know it
		return nil, FlavourUnknown, r.taskErr(ErrLost, cause)
	}
	raw, f, err := r.c.cfg.Requester.Request(ctx, timeout, fmt.Sprintf("%s: %s", r.label, method), method, params)
	if err != nil {
		if gone, cause := r.gone(); gone { // the process ended during the request
			return nil, f, r.taskErr(ErrLost, cause)
		}
	}
	return raw, f, err
}

// gone reports, through Config.Gone, whether the server process that created the task has
// ended, and why.
func (r *Run) gone() (bool, error) {
	if r.c.cfg.Gone == nil {
		return false, nil
	}
	origin, ok := r.c.CreatedOn(r.id)
	if !ok {
		return false, nil
	}
	return r.c.cfg.Gone(origin)
}

// notFound turns the server's "no such task" into ErrExpired (its TTL passed) or
// ErrUnknown.
func (r *Run) notFound(err error) error {
	var je *jsonrpc.Error
	errors.As(err, &je)
	st, _, seen := r.state()
	r.mu.Lock()
	created := r.created
	r.mu.Unlock()
	if seen && st.TTL > 0 && time.Since(created) >= st.TTL {
		return r.taskErr(ErrExpired, je)
	}
	return r.taskErr(ErrUnknown, je)
}

// Poll sends tasks/get, records the answer and returns it (with Server and Tool set).
func (r *Run) Poll(ctx context.Context) (Task, error) {
	raw, sf, err := r.request(ctx, methodTasksGet, &Params{TaskID: r.id})
	if err != nil {
		return Task{}, err
	}
	r.mu.Lock()
	f := r.flav
	if f == FlavourUnknown {
		f, r.flav = sf, sf
	}
	r.mu.Unlock()
	st, err := parseTask(raw, f)
	if err != nil {
		return Task{}, fmt.Errorf("tasks/get: %w", err)
	}
	st.fromGet = true
	if st.ID != r.id {
		r.answeredOther.Store(true)
		return Task{}, r.taskErr(ErrUnknown, fmt.Errorf("tasks/get answered about task %s", redact.Quote(st.ID, 64)))
	}
	if f == FlavourExt && st.result != nil {
		if res, err := decodeToolResult(st.result); err == nil {
			st.Result = res
		}
	}
	r.record(ctx, st)
	t := st.Task
	t.Server, t.Tool = r.c.cfg.Server, r.tool
	return t, nil
}

// result2025 fetches a 2025-11-25 task's outcome with tasks/result, which blocks until the
// task ended and meanwhile delivers the server's requests for input (elicitation/create,
// answered through the host's elicitation handler). The status is polled alongside so
// callbacks keep seeing it.
func (r *Run) result2025(ctx context.Context) (*mcp.CallToolResult, error) {
	pctx, stopPolling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if st, _, _ := r.state(); !st.Status.Terminal() {
		wg.Go(func() { r.pollAlongside(pctx) })
	}
	// Bounded by what is left of ctx rather than the call timeout: it blocks while the task
	// runs.
	timeout := r.c.cfg.TaskTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	raw, _, err := r.requestWithin(ctx, timeout, methodTasksResult, &Params{TaskID: r.id})
	stopPolling()
	wg.Wait()
	if err != nil {
		var je *jsonrpc.Error
		if ctx.Err() == nil && errors.As(err, &je) {
			return nil, r.classify(ctx, je)
		}
		return nil, err
	}
	var head struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(raw, &head)
	if id := relatedTask(head.Meta); id != "" && id != r.id {
		r.answeredOther.Store(true)
		return nil, r.taskErr(ErrUnknown, fmt.Errorf("tasks/result answered with the result of task %s", redact.Quote(id, 64)))
	}
	return r.outcome(raw)
}

// outcome decodes the task's result (raw, as the server sent it) and keeps its
// structuredContent's bytes for StructuredContent.
func (r *Run) outcome(raw json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := decodeToolResult(raw)
	if err != nil || res.StructuredContent == nil {
		return res, err
	}
	var m struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(raw, &m) == nil {
		r.mu.Lock()
		r.structured = m.StructuredContent
		r.mu.Unlock()
	}
	return res, nil
}

// StructuredContent returns the structuredContent of the result Await returned as the
// server sent it (in its key order, which go-sdk's decoding into a map loses), or nil.
func (r *Run) StructuredContent() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.structured
}

// pollAlongside polls the task's status until it ends or ctx does (errors are the result
// fetch's business).
func (r *Run) pollAlongside(ctx context.Context) {
	unchanged := 0
	for {
		st, _, _ := r.state()
		if st.Status.Terminal() || wait(ctx, r.interval(unchanged)) != nil {
			return
		}
		next, err := r.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrUnknown) || errors.Is(err, ErrExpired) {
				return
			}
			continue
		}
		if next.Status == st.Status && next.StatusMessage == st.StatusMessage {
			unchanged++
		} else {
			unchanged = 0
		}
	}
}

// classify explains a JSON-RPC error from tasks/result, which is either the task's own
// (the call failed) or the server not knowing the task: one tasks/get tells them apart.
func (r *Run) classify(ctx context.Context, je *jsonrpc.Error) error {
	t, err := r.Poll(ctx)
	switch {
	case errors.Is(err, ErrUnknown), errors.Is(err, ErrExpired):
		return err
	case err == nil && t.Status == Cancelled:
		return r.taskErr(ErrCancelled, je)
	}
	return r.taskErr(ErrFailed, je)
}

// Cancel sends tasks/cancel. Under 2025-11-25 only servers that offer it get it.
func (r *Run) Cancel(ctx context.Context) error {
	if caps, f, ok := r.c.cfg.Requester.Live(); ok && f == Flavour2025 && !caps.Cancel {
		return errors.New("the server does not offer tasks/cancel (capabilities.tasks.cancel)")
	}
	_, _, err := r.request(ctx, methodTasksCancel, &Params{TaskID: r.id})
	return err
}

// answer fulfils an extension task's outstanding input requests (each key once) through
// the host's elicitation handler (declining them when there is none) and sends the answers
// with tasks/update.
func (r *Run) answer(ctx context.Context, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil // a state without the requests (a task handle, a notification): tasks/get brings them
	}
	var reqs map[string]json.RawMessage
	if json.Unmarshal(raw, &reqs) != nil {
		return r.taskErr(ErrFailed, errors.New("the server reported input_required without readable inputRequests"))
	}
	keys := slices.Sorted(maps.Keys(reqs))
	r.mu.Lock()
	if r.answered == nil {
		r.answered = map[string]bool{}
	}
	var todo []string
	for _, k := range keys {
		if !r.answered[k] {
			todo = append(todo, k)
		}
	}
	total := len(r.answered) + len(todo)
	r.mu.Unlock()
	if len(todo) == 0 {
		return nil // answered already; the server has not caught up yet
	}
	if len(reqs) > MaxInputRequests || total > MaxInputKeysPerTask {
		return r.taskErr(ErrFailed, fmt.Errorf("the server asks for input %d times (at most %d at once and %d per task)", total, MaxInputRequests, MaxInputKeysPerTask))
	}
	responses := make(map[string]json.RawMessage, len(todo))
	for _, k := range todo {
		if len(k) > MaxInputKeyBytes || !validText(k) {
			return r.taskErr(ErrFailed, fmt.Errorf("the server sent an unusable input request key %s", redact.Quote(k, 64)))
		}
		var one struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[k], &one); err != nil {
			return r.taskErr(ErrFailed, fmt.Errorf("input request %s is not a request: %w", redact.Quote(k, 64), err))
		}
		if one.Method != "elicitation/create" {
			return r.taskErr(ErrFailed, fmt.Errorf("the server asks for %s (input request %s), which mcpbridge does not answer", redact.Quote(one.Method, 64), redact.Quote(k, 64)))
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(one.Params, &p); err != nil {
			return r.taskErr(ErrFailed, fmt.Errorf("input request %s: elicitation params: %w", redact.Quote(k, 64), err))
		}
		var res *mcp.ElicitResult
		if r.c.cfg.Ask == nil {
			// Nobody can answer (no Options.OnElicitation): decline, which this version
			// allows, and let the server decide, rather than give up on the task.
			res = &mcp.ElicitResult{Action: "decline"}
			r.c.cfg.Log.Debug("declined a task's input request: no elicitation handler", "task", r.id, "key", k)
		} else {
			var err error
			if res, err = r.c.elicit(ctx, r.id, &p); err != nil {
				return fmt.Errorf("input request %s: %w", redact.Quote(k, 64), err)
			}
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		responses[k] = b
	}
	if _, _, err := r.request(ctx, methodTasksUpdate, &Params{TaskID: r.id, InputResponses: responses}); err != nil {
		return err
	}
	r.mu.Lock()
	for k := range responses {
		r.answered[k] = true
	}
	r.mu.Unlock()
	return nil
}
