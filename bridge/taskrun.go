package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// The task lifecycle: create (a tools/call the server answers with a task handle), poll
// tasks/get at the server's pollInterval (bounded both ways; backing off when it gives
// none), answer input (2025-11-25: tasks/result delivers elicitation/create; extension:
// inputRequests answered with tasks/update), fetch the result (tasks/result, or inline), and
// cancel (tasks/cancel) when the caller gives up. Everything the server says is untrusted:
// IDs, states, intervals, TTLs, input requests and results are checked and bounded.

// Poll pacing: a pollInterval below minPollInterval (0 included) is raised to it, one above
// maxPollInterval lowered to it; without one the bridge polls after firstPoll, then backs
// off by half each unchanged poll up to maxBackoffPoll (limits.go).
const firstPoll = 500 * time.Millisecond

// taskTable is a server's tasks in flight, and the IDs of recent ones: the bridge follows
// each ID once at a time, a server that hands out an ID again for a new task is caught, and
// a server's request for input that names a task (related-task metadata) must name one in
// flight.
type taskTable struct {
	mu         sync.Mutex
	runs       map[string]*taskRun
	recent     []string // IDs of tasks created recently on recentSess (a ring of maxRecentTasks)
	next       int
	recentSess *session // a new session (a restarted server may count from 1 again) starts afresh
}

// errReusedID explains a task ID the server handed out twice.
var errReusedID = errors.New("the server handed out this task ID for a new task while it still names another one (task IDs must be unique)")

// add registers r. created says the server just created the task: its ID must be new.
func (t *taskTable) add(r *taskRun, created bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.runs[r.id]; dup {
		if created {
			return &TaskError{TaskID: r.id, Kind: ErrUnknownTask, Err: errReusedID}
		}
		return fmt.Errorf("task %s is already being awaited by another call", redact.Quote(r.id, 64))
	}
	if created {
		if err := t.created(r.id, r.sess); err != nil {
			return err
		}
	}
	if t.runs == nil {
		t.runs = make(map[string]*taskRun)
	}
	t.runs[r.id] = r
	return nil
}

// created records the ID of a task sess's server just created; one it created recently is
// an error. t.mu is held.
func (t *taskTable) created(id string, sess *session) error {
	if sess != t.recentSess {
		t.recent, t.next, t.recentSess = t.recent[:0], 0, sess
	}
	if slices.Contains(t.recent, id) {
		return &TaskError{TaskID: id, Kind: ErrUnknownTask, Err: errReusedID}
	}
	if len(t.recent) < maxRecentTasks {
		t.recent = append(t.recent, id)
	} else {
		t.recent[t.next] = id
		t.next = (t.next + 1) % maxRecentTasks
	}
	return nil
}

// noteCreated records the ID of a task the bridge does not follow (StartTask).
func (t *taskTable) noteCreated(id string, sess *session) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.runs[id]; dup {
		return &TaskError{TaskID: id, Kind: ErrUnknownTask, Err: errReusedID}
	}
	return t.created(id, sess)
}

func (t *taskTable) remove(r *taskRun) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.runs[r.id] == r {
		delete(t.runs, r.id)
	}
}

func (t *taskTable) get(id string) *taskRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.runs[id]
}

// taskRun is one task the bridge follows.
type taskRun struct {
	s    *Server
	rt   *remoteTool // nil for a task known only by ID
	tool string      // the tool's name on the server; "" when unknown
	id   string
	ctx  context.Context // the follower's context: input requests for the task run under it
	// progressTok is the progressToken of the call that created the task (valid for the
	// task's life); progress receives its notifications and the task's status.
	progressTok string
	progress    func(Progress)
	label       string   // for errors: `tool "x": task "id"` or `task "id"`
	fresh       bool     // the server just created the task (its ID must be new)
	sess        *session // the session that created it (fresh tasks)

	mu       sync.Mutex // guards the fields below (the 2025 result fetch polls alongside)
	flav     flavour
	created  time.Time // when the bridge learnt of the task (its clock, not the server's)
	last     taskState
	seen     bool
	answered map[string]bool // extension: inputRequests keys answered
}

// newRun starts following task id of tool (rt may be nil) under ctx.
func (s *Server) newRun(ctx context.Context, rt *remoteTool, tool, id string, f flavour) *taskRun {
	r := &taskRun{s: s, rt: rt, tool: tool, id: id, ctx: ctx, flav: f, created: time.Now()}
	if tool != "" {
		r.label = fmt.Sprintf("tool %q: task %s", tool, redact.Quote(id, 64))
	} else {
		r.label = "task " + redact.Quote(id, 64)
	}
	return r
}

// state returns the last state seen and the flavour.
func (r *taskRun) state() (taskState, flavour, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.flav, r.seen
}

// fail wraps a lifecycle error for the caller: a *ServerError naming the server, the tool
// and the task.
func (r *taskRun) fail(err error) error {
	var se *ServerError
	if errors.As(err, &se) {
		return se
	}
	var te *TaskError
	if errors.As(err, &te) && te.TaskID == r.id { // it names the task itself
		if r.tool == "" {
			return &ServerError{Server: r.s.cfg.ID, Phase: PhaseCall, Err: err}
		}
		return &ServerError{Server: r.s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("tool %q: %w", r.tool, err)}
	}
	return &ServerError{Server: r.s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", r.label, err)}
}

// taskErr builds the error of a task that ended without a result.
func (r *taskRun) taskErr(kind, cause error) error {
	st, _, _ := r.state()
	return &TaskError{TaskID: r.id, Status: st.Status, Message: st.StatusMessage, Kind: kind, Err: cause}
}

// observe records a state the server reported and tells the callbacks when the status or
// its message changed.
func (r *taskRun) observe(ctx context.Context, st taskState) {
	r.mu.Lock()
	changed := !r.seen || st.Status != r.last.Status || st.StatusMessage != r.last.StatusMessage
	r.last, r.seen = st, true
	r.mu.Unlock()
	if !changed {
		return
	}
	t := st.Task
	t.Server, t.Tool = r.s.cfg.ID, r.tool
	r.s.log.Debug("task status", "tool", r.tool, "task", r.id, "status", string(t.Status))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("mcp.task.status", trace.WithAttributes(
			attribute.String("mcp.task.id", r.id),
			attribute.String("mcp.task.status", string(t.Status)),
		))
	}
	if fn := r.progress; fn != nil {
		p := Progress{Server: r.s.cfg.ID, Tool: r.tool, Message: t.StatusMessage, TaskID: r.id, Status: t.Status}
		r.s.progress.notify.post(func() { fn(p) })
	}
	if fn := r.s.opts.OnTaskStatus; fn != nil {
		fn(ctx, t)
	}
}

// runTask follows run to its end and returns the tool's result. It is bounded by timeout,
// the task timeout (and ctx, and Close); when it gives up on a task that has not ended, it
// cancels the task on the server.
func (s *Server) runTask(ctx context.Context, run *taskRun, timeout time.Duration) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	run.ctx = ctx
	if err := s.tasks.add(run, run.fresh); err != nil {
		return nil, run.fail(err)
	}
	defer s.tasks.remove(run)
	if run.progress == nil {
		run.progress = progressFunc(ctx)
	}
	if run.progressTok != "" && run.progress != nil {
		release := s.progress.hold(run.progressTok, run.tool, run.id, run.progress)
		defer release()
	}
	res, err := run.follow(ctx)
	run.flush(ctx)
	if err == nil {
		return res, nil
	}
	// Giving up on a task that has not ended (the caller left, a bound was hit, the server
	// misbehaved): cancel it, unless its ID may be another call's.
	if st, _, _ := run.state(); !st.Status.Terminal() && !errors.Is(err, ErrUnknownTask) {
		run.cancelQuietly(ctx)
	}
	if ctx.Err() != nil {
		return nil, s.requestErr(ctx, PhaseCall, run.label, timeout, err)
	}
	return nil, run.fail(err)
}

// flush waits (briefly) until the WithProgress callback has seen the statuses posted so far,
// so a caller has the task's last status before the call returns.
func (r *taskRun) flush(ctx context.Context) {
	if r.progress == nil {
		return
	}
	seen := make(chan struct{})
	r.s.progress.notify.post(func() { close(seen) })
	t := time.NewTimer(progressLinger)
	defer t.Stop()
	select {
	case <-seen:
	case <-ctx.Done():
	case <-t.C: // a slow callback; the rest arrive later
	}
}

// cancelQuietly sends tasks/cancel for a task the bridge gives up on (best effort, bounded,
// even though ctx has ended).
func (r *taskRun) cancelQuietly(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer cancel()
	if err := r.cancelRequest(cctx); err != nil {
		r.s.log.Debug("tasks/cancel failed", "tool", r.tool, "task", r.id, "err", err)
	}
}

// follow polls the task until it ends and returns its result.
func (r *taskRun) follow(ctx context.Context) (*mcp.CallToolResult, error) {
	unchanged := 0
	failures := 0
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
			if !(f == flavourExt && st.Status.Terminal() && !st.fromGet) {
				if err := r.wait(ctx, r.interval(unchanged)); err != nil {
					return nil, err
				}
			}
		}
		next, err := r.poll(ctx)
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
		case errors.Is(err, ErrUnknownTask), errors.Is(err, ErrTaskExpired):
			return nil, err
		default:
			if failures++; failures >= maxPollFailures {
				return nil, fmt.Errorf("%d polls in a row failed: %w", failures, err)
			}
			r.s.log.Debug("tasks/get failed; polling again", "tool", r.tool, "task", r.id, "err", err)
		}
	}
}

// step acts on a state: done reports that the task's outcome is known (res or err).
func (r *taskRun) step(ctx context.Context, st taskState, f flavour) (res *mcp.CallToolResult, done bool, err error) {
	if st.Status == TaskCancelled {
		return nil, true, r.taskErr(ErrTaskCancelled, nil)
	}
	if f == flavour2025 {
		if st.Status == TaskWorking {
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
	case TaskCompleted:
		if st.result == nil {
			return nil, true, r.taskErr(ErrTaskFailed, errors.New("the server reported the task completed without its result"))
		}
		res, err := decodeToolResult(st.result)
		return res, true, err
	case TaskFailed:
		var cause error
		if st.rpcErr != nil {
			cause = st.rpcErr
		}
		return nil, true, r.taskErr(ErrTaskFailed, cause)
	case TaskInputRequired:
		if err := r.answer(ctx, st.inputRequests); err != nil {
			return nil, true, err
		}
	}
	return nil, false, nil
}

// expired reports a task that outlived the TTL the server gave it, by the bridge's clock.
func (r *taskRun) expired() error {
	st, _, _ := r.state()
	r.mu.Lock()
	created := r.created
	r.mu.Unlock()
	if st.TTL > 0 && !st.Status.Terminal() && time.Since(created) > st.TTL+maxPollInterval {
		return r.taskErr(ErrTaskExpired, fmt.Errorf("still %s %s after its TTL of %s", st.Status, time.Since(created).Round(time.Second), st.TTL))
	}
	return nil
}

// interval is the wait before the next poll.
func (r *taskRun) interval(unchanged int) time.Duration {
	st, _, _ := r.state()
	if st.pollGiven {
		return min(max(st.PollInterval, minPollInterval), maxPollInterval)
	}
	d := firstPoll
	for i := 0; i < unchanged && d < maxBackoffPoll; i++ {
		d += d / 2
	}
	return min(d, maxBackoffPoll)
}

// wait sleeps d or until ctx ends.
func (r *taskRun) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// request sends one tasks/* request for the task on the live session (redialled when dead:
// the task may outlive a session on HTTP servers), bounded by the call timeout, and returns
// the raw result and the session's flavour.
func (r *taskRun) request(ctx context.Context, method string, params *taskParams) (json.RawMessage, flavour, error) {
	raw, f, err := r.requestWithin(ctx, r.s.opts.callTimeout(r.s.cfg), method, params)
	if err != nil && isNotFound(err) {
		return nil, f, r.notFound(err)
	}
	return raw, f, err
}

func (r *taskRun) requestWithin(ctx context.Context, timeout time.Duration, method string, params *taskParams) (json.RawMessage, flavour, error) {
	var raw json.RawMessage
	var f flavour
	what := fmt.Sprintf("%s: %s", r.label, method)
	err := r.s.doWithin(ctx, timeout, false, PhaseCall, what, true, func(ctx context.Context, sess *session) error {
		f = flavour2025
		if sess.taskCaps.extension || sess.cs.InitializeResult().ProtocolVersion >= modernVersion {
			f = flavourExt
		}
		res, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, sess.cs, method, params)
		if err != nil {
			return err
		}
		raw = res.raw
		return nil
	})
	return raw, f, err
}

// notFound turns the server's "no such task" into ErrTaskExpired (its TTL passed) or
// ErrUnknownTask.
func (r *taskRun) notFound(err error) error {
	var je *jsonrpc.Error
	errors.As(err, &je)
	st, _, seen := r.state()
	r.mu.Lock()
	created := r.created
	r.mu.Unlock()
	if seen && st.TTL > 0 && time.Since(created) >= st.TTL {
		return r.taskErr(ErrTaskExpired, je)
	}
	return r.taskErr(ErrUnknownTask, je)
}

// poll sends tasks/get and records the answer.
func (r *taskRun) poll(ctx context.Context) (Task, error) {
	raw, sf, err := r.request(ctx, methodTasksGet, &taskParams{TaskID: r.id})
	if err != nil {
		return Task{}, err
	}
	r.mu.Lock()
	f := r.flav
	if f == flavourUnknown {
		f, r.flav = sf, sf
	}
	r.mu.Unlock()
	st, err := parseTask(raw, f)
	if err != nil {
		return Task{}, fmt.Errorf("tasks/get: %w", err)
	}
	st.fromGet = true
	if st.ID != r.id {
		return Task{}, r.taskErr(ErrUnknownTask, fmt.Errorf("tasks/get answered about task %s", redact.Quote(st.ID, 64)))
	}
	if f == flavourExt && st.result != nil {
		if res, err := decodeToolResult(st.result); err == nil {
			st.Result = res
		}
	}
	r.observe(ctx, st)
	t := st.Task
	t.Server, t.Tool = r.s.cfg.ID, r.tool
	return t, nil
}

// result2025 fetches a 2025-11-25 task's outcome with tasks/result, which blocks until the
// task ended and meanwhile delivers the server's requests for input (elicitation/create,
// answered through Options.OnElicitation). The status is polled alongside so callbacks
// keep seeing it.
func (r *taskRun) result2025(ctx context.Context) (*mcp.CallToolResult, error) {
	pctx, stopPolling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if st, _, _ := r.state(); !st.Status.Terminal() {
		wg.Go(func() { r.pollAlongside(pctx) })
	}
	// Bounded by what is left of ctx rather than the call timeout: it blocks while the task
	// runs.
	timeout := r.s.taskTimeout()
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	raw, _, err := r.requestWithin(ctx, timeout, methodTasksResult, &taskParams{TaskID: r.id})
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
		return nil, r.taskErr(ErrUnknownTask, fmt.Errorf("tasks/result answered with the result of task %s", redact.Quote(id, 64)))
	}
	return decodeToolResult(raw)
}

// pollAlongside polls the task's status until it ends or ctx does (errors are the result
// fetch's business).
func (r *taskRun) pollAlongside(ctx context.Context) {
	unchanged := 0
	for {
		st, _, _ := r.state()
		if st.Status.Terminal() || r.wait(ctx, r.interval(unchanged)) != nil {
			return
		}
		next, err := r.poll(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrUnknownTask) || errors.Is(err, ErrTaskExpired) {
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
func (r *taskRun) classify(ctx context.Context, je *jsonrpc.Error) error {
	t, err := r.poll(ctx)
	switch {
	case errors.Is(err, ErrUnknownTask), errors.Is(err, ErrTaskExpired):
		return err
	case err == nil && t.Status == TaskCancelled:
		return r.taskErr(ErrTaskCancelled, je)
	}
	return r.taskErr(ErrTaskFailed, je)
}

// cancelRequest sends tasks/cancel. Under 2025-11-25 only servers that offer it get it.
func (r *taskRun) cancelRequest(ctx context.Context) error {
	r.s.mu.Lock()
	sess := r.s.sess
	r.s.mu.Unlock()
	if sess != nil && !sess.taskCaps.extension && !sess.taskCaps.cancel && sess.cs.InitializeResult().ProtocolVersion < modernVersion {
		return errors.New("the server does not offer tasks/cancel (capabilities.tasks.cancel)")
	}
	_, _, err := r.request(ctx, methodTasksCancel, &taskParams{TaskID: r.id})
	return err
}

// answer fulfils an extension task's outstanding input requests (each key once) through
// Options.OnElicitation and sends the answers with tasks/update.
func (r *taskRun) answer(ctx context.Context, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil // a state without the requests (a task handle, a notification): tasks/get brings them
	}
	var reqs map[string]json.RawMessage
	if json.Unmarshal(raw, &reqs) != nil {
		return r.taskErr(ErrTaskFailed, errors.New("the server reported input_required without readable inputRequests"))
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
	if len(reqs) > maxInputRequests || total > maxInputKeysPerTask {
		return r.taskErr(ErrTaskFailed, fmt.Errorf("the server asks for input %d times (at most %d at once and %d per task)", total, maxInputRequests, maxInputKeysPerTask))
	}
	responses := make(map[string]json.RawMessage, len(todo))
	for _, k := range todo {
		if len(k) > maxInputKeyBytes || !validText(k) {
			return r.taskErr(ErrTaskFailed, fmt.Errorf("the server sent an unusable input request key %s", redact.Quote(k, 64)))
		}
		var one struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[k], &one); err != nil {
			return r.taskErr(ErrTaskFailed, fmt.Errorf("input request %s is not a request: %w", redact.Quote(k, 64), err))
		}
		if one.Method != "elicitation/create" {
			return r.taskErr(ErrTaskFailed, fmt.Errorf("the server asks for %s (input request %s), which mcpbridge does not answer", redact.Quote(one.Method, 64), redact.Quote(k, 64)))
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(one.Params, &p); err != nil {
			return r.taskErr(ErrTaskFailed, fmt.Errorf("input request %s: elicitation params: %w", redact.Quote(k, 64), err))
		}
		res, err := r.s.answerElicitation(ctx, r.id, &p)
		if err != nil {
			return fmt.Errorf("input request %s: %w", redact.Quote(k, 64), err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		responses[k] = b
	}
	if _, _, err := r.request(ctx, methodTasksUpdate, &taskParams{TaskID: r.id, InputResponses: responses}); err != nil {
		return err
	}
	r.mu.Lock()
	for k := range responses {
		r.answered[k] = true
	}
	r.mu.Unlock()
	return nil
}

// answerElicitation asks OnElicitation for the answer to an extension task's elicitation,
// checked the way go-sdk checks answers to elicitation/create: the form mode's flat schema,
// the content against it, and the schema's defaults filled in (SEP-1034).
func (s *Server) answerElicitation(ctx context.Context, taskID string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if s.opts.OnElicitation == nil {
		return nil, errors.New("the task needs input from the user (elicitation), and Options.OnElicitation is not set")
	}
	mode := p.Mode
	if mode == "" {
		mode = "form"
	}
	var props map[string]elicitProp
	switch mode {
	case "form":
		var err error
		if props, err = elicitSchema(p.RequestedSchema); err != nil {
			return nil, err
		}
	case "url":
		if p.URL == "" {
			return nil, errors.New("URL elicitation without a URL")
		}
	default:
		return nil, fmt.Errorf("unsupported elicitation mode %s", redact.Quote(mode, 64))
	}
	s.catMu.Lock()
	s.status.Elicitations++
	s.catMu.Unlock()
	res, err := s.opts.OnElicitation(ctx, &ElicitRequest{Server: s.cfg.ID, Params: p, TaskID: taskID})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("OnElicitation returned no result")
	}
	if res.Action == "accept" && mode == "form" {
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		for name, v := range res.Content {
			pr, ok := props[name]
			if !ok {
				return nil, fmt.Errorf("elicitation answer has field %q, which the requested schema does not declare", name)
			}
			if !pr.accepts(v) {
				return nil, fmt.Errorf("elicitation answer field %q is not a %s", name, pr.Type)
			}
		}
		for name, pr := range props {
			if _, ok := res.Content[name]; !ok && pr.Default != nil {
				res.Content[name] = pr.Default
			}
		}
	}
	return res, nil
}

// elicitProp is one property of a form elicitation's flat schema.
type elicitProp struct {
	Type    string `json:"type"`
	Default any    `json:"default"`
}

func (p elicitProp) accepts(v any) bool {
	if p.Type == "" {
		return true
	}
	switch v.(type) {
	case string:
		return p.Type == "string"
	case bool:
		return p.Type == "boolean"
	case float64, int, int64, json.Number:
		return p.Type == "number" || p.Type == "integer"
	case []any:
		return p.Type == "array"
	}
	return false
}

// elicitSchema reads a form elicitation's requestedSchema: an object of primitive
// properties.
func elicitSchema(schema any) (map[string]elicitProp, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("requested schema: %w", err)
	}
	var s struct {
		Type       string                `json:"type"`
		Properties map[string]elicitProp `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" {
		return nil, errors.New("the requested schema is not a flat object schema")
	}
	return s.Properties, nil
}

// elicitationContext returns the context and task ID for a server's elicitation/create:
// one that names a task (related-task metadata, 2025-11-25 tasks/result) runs under the
// context of the call following that task; one naming a task the bridge does not follow is
// refused.
func (s *Server) elicitationContext(ctx context.Context, meta map[string]any) (context.Context, string, error) {
	id := relatedTask(meta)
	if id == "" {
		return ctx, "", nil
	}
	run := s.tasks.get(id)
	if run == nil {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no task " + redact.Quote(id, 64) + " is waiting for input"}
	}
	return run.ctx, id, nil
}

// startTask creates a task for StartTask.
func (s *Server) startTask(ctx context.Context, rt *remoteTool, args json.RawMessage) (Task, error) {
	var res *mcp.CallToolResult
	var run *taskRun
	err := s.do(ctx, PhaseCall, rt.label, rt.retryable(), func(ctx context.Context, sess *session) error {
		params := &mcp.CallToolParams{Name: rt.name, Arguments: args}
		if meta := requestMeta(ctx, s.opts.tel); meta != nil {
			params.Meta = meta
		}
		var err error
		res, run, err = s.sendCall(ctx, sess, rt, params, true, false)
		return err
	})
	if err != nil {
		return Task{}, err
	}
	if run == nil {
		return Task{Server: s.cfg.ID, Tool: rt.name, Status: TaskCompleted, Result: res}, nil
	}
	if err := s.tasks.noteCreated(run.id, run.sess); err != nil {
		return Task{}, run.fail(err)
	}
	st, _, _ := run.state()
	t := st.Task
	t.Server, t.Tool = s.cfg.ID, rt.name
	return t, nil
}

// sendCall sends one tools/call on sess, directly or through go-sdk (callOn); when the call
// may become a task, with a tap that adds the task member (2025-11-25) and keeps a task
// handle instead of decoding it, on either path. It returns the result, or the task the
// server created instead. force (StartTask) asks for a task; shared: only the result's text
// is used (wire.CallOptions.SharedMeta).
func (s *Server) sendCall(ctx context.Context, sess *session, rt *remoteTool, params *mcp.CallToolParams, force, shared bool) (*mcp.CallToolResult, *taskRun, error) {
	tap, err := s.taskTap(sess, rt, force)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.callOn(ctx, sess, rt, params, tap, shared) // callpath.go: direct or through go-sdk
	if tap == nil {
		return res, nil, err
	}
	tap.Done()
	raw := tap.Result()
	if raw == nil {
		return res, nil, err
	}
	// A task handle: go-sdk decoded it as an (empty) tool result, or failed to.
	st, f, perr := parseCreate(raw)
	if perr != nil {
		return nil, nil, fmt.Errorf("the server answered with a task handle that is not usable: %w", perr)
	}
	run := s.newRun(ctx, rt, rt.name, st.ID, f)
	run.fresh, run.sess = true, sess
	run.progressTok, _ = params.GetProgressToken().(string)
	run.progress = progressFunc(ctx)
	run.observe(ctx, st)
	return nil, run, nil
}

// taskTap returns the tap for a tools/call of rt on sess that may become a task, or nil for
// a plain call.
func (s *Server) taskTap(sess *session, rt *remoteTool, force bool) (*wire.Tap, error) {
	mode := s.taskMode()
	caps := sess.taskCaps
	switch {
	case mode == TasksNever:
		if force {
			return nil, errors.New("tasks are off for this server (tasks: never)")
		}
		return nil, nil
	case caps.extension:
		return &wire.Tap{Method: "tools/call", Keep: isTaskHandle}, nil
	case !caps.toolsCall:
		if force {
			return nil, errors.New("the server does not offer tools/call as a task (capabilities.tasks.requests.tools.call)")
		}
		return nil, nil
	}
	switch rt.taskSupport {
	case "required":
	case "optional":
		if mode != TasksAlways && !force {
			return nil, nil
		}
	default:
		if force {
			return nil, fmt.Errorf("%s does not run as a task (execution.taskSupport %s)", rt.label, redact.Quote(cmp.Or(rt.taskSupport, "absent"), 64))
		}
		return nil, nil
	}
	ttl := strconv.FormatInt(s.taskTimeout().Milliseconds(), 10)
	return &wire.Tap{Method: "tools/call", Param: "task", Value: json.RawMessage(`{"ttl":` + ttl + `}`), Keep: isTaskHandle}, nil
}

// requiredTaskProblem says why a tool whose execution.taskSupport is "required" cannot be
// offered on a session with caps: "" when it can.
func (s *Server) requiredTaskProblem(caps taskCaps) string {
	switch {
	case s.taskMode() == TasksNever:
		return `execution.taskSupport is "required": the tool can only run as an MCP task, and tasks are off for this server (tasks: never)`
	case caps.extension || caps.toolsCall:
		return ""
	}
	return `execution.taskSupport is "required", but the server does not offer tools/call as a task (capabilities.tasks.requests.tools.call)`
}
