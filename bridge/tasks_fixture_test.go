package bridge_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// taskServer is a go-sdk MCP server whose tools run as MCP tasks, speaking either the
// 2025-11-25 experimental tasks (ext false) or the 2026-07-28 tasks extension (ext true).
// go-sdk has no task support, so the fixture adds it the way a server author would: custom
// methods for tasks/*, a receiving middleware that answers tools/call with a task handle
// and adds what go-sdk's types cannot carry (the 2025 "tasks" capability, execution.
// taskSupport). Each tool's work is a Go function driving the task through the fixture's
// methods, so tests script honest and hostile servers alike.
type taskServer struct {
	ext      bool
	srv      *mcp.Server
	caps2025 string // the 2025 capabilities.tasks JSON; "" leaves it out

	mu      sync.Mutex
	tasks   map[string]*fxTask
	seq     int
	support map[string]string // execution.taskSupport per tool
	work    map[string]func(context.Context, *fxTask)
	// newID names task n (default "task-<n>").
	newID func(n int) string
	// getHook, when set, may replace the tasks/get answer (raw JSON) for a task.
	getHook func(t *fxTask, answer map[string]any) any
	// poll is the pollInterval new tasks start with (default 1000).
	poll any
	// relatedID, when set, is the task ID tasks/result and the elicitations it delivers
	// name in their related-task metadata (a server answering about another task).
	relatedID string
	// onChange, when set, is told each change of a task (after it, outside the lock): a
	// server that sends status notifications (tasks_notify_test.go).
	onChange func(t *fxTask)
	// lastConn is the connection the last tools/call came on; listened the connections
	// whose subscriptions/listen named each task ID (notifications.taskIds).
	lastConn *recordingConn
	listened map[string][]notifier
	conns    []*recordingConn // every connection, in order
	// listenHTTP says how the Streamable HTTP endpoint answers a subscriptions/listen naming
	// task IDs (go-sdk's server knows no taskIds and would end the stream at once): "" holds
	// the stream open and tells the tasks' changes on it; "close" acknowledges and ends it.
	listenHTTP string
	subscribed chan string // when set, gets each task ID a subscription names

	// What clients sent.
	callParams  []json.RawMessage // tools/call params, raw (2025: has "task"?)
	declaredExt []bool            // per tools/call: the tasks extension in _meta clientCapabilities
	gets        int
	nameHeaders []string // Mcp-Name of tasks/* requests over HTTP
	cancels     []string
	updates     []map[string]json.RawMessage
}

// fxTask is one task of the fixture.
type fxTask struct {
	fx           *taskServer
	id           string
	tool         string
	args         json.RawMessage
	status       string
	msg          string
	poll         any // pollInterval(Ms) as sent; nil leaves it out
	ttl          any
	result       json.RawMessage            // completed
	rpcErr       *jsonrpc.Error             // failed with a JSON-RPC error
	input        map[string]json.RawMessage // ext: outstanding inputRequests
	answers      map[string]json.RawMessage // ext: inputResponses received
	elicit       *mcp.ElicitParams          // 2025: a request to deliver through tasks/result
	elicitAnswer *mcp.ElicitResult
	changed      chan struct{} // closed and replaced on every change
	cancelled    bool
	conn         *recordingConn // the connection the task was created on
}

func newTaskServer(ext bool) *taskServer {
	fx := &taskServer{
		ext:      ext,
		caps2025: `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`,
		tasks:    map[string]*fxTask{},
		poll:     1000,
		support:  map[string]string{},
		work:     map[string]func(context.Context, *fxTask){},
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	if ext {
		caps.AddExtension("io.modelcontextprotocol/tasks", map[string]any{})
	}
	fx.srv = mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	fx.srv.AddReceivingMiddleware(fx.middleware)
	type params struct {
		mcp.ParamsBase
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(mcp.AddReceivingCustomMethod(fx.srv, "tasks/get", func(ctx context.Context, ss *mcp.ServerSession, p *params) (*rawJSON, error) {
		return fx.get(p.TaskID)
	}))
	must(mcp.AddReceivingCustomMethod(fx.srv, "tasks/result", func(ctx context.Context, ss *mcp.ServerSession, p *params) (*rawJSON, error) {
		return fx.result(ctx, ss, p.TaskID)
	}))
	must(mcp.AddReceivingCustomMethod(fx.srv, "tasks/cancel", func(ctx context.Context, ss *mcp.ServerSession, p *params) (*rawJSON, error) {
		return fx.cancel(p.TaskID)
	}))
	must(mcp.AddReceivingCustomMethod(fx.srv, "tasks/update", func(ctx context.Context, ss *mcp.ServerSession, p *params) (*rawJSON, error) {
		return fx.update(p.TaskID, p.InputResponses)
	}))
	return fx
}

// tool adds a tool whose calls run work as a task (support is its execution.taskSupport).
// A plain call (no task asked for, or support "") runs work too and answers with the
// task's result.
func (fx *taskServer) tool(name, support string, work func(context.Context, *fxTask)) {
	fx.mu.Lock()
	fx.support[name] = support
	fx.work[name] = work
	fx.mu.Unlock()
	fx.srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		t := fx.newTask(name, req.Params.Arguments)
		work(ctx, t)
		t.fx.mu.Lock()
		defer t.fx.mu.Unlock()
		var res mcp.CallToolResult
		if err := json.Unmarshal(t.result, &res); err != nil {
			return nil, fmt.Errorf("plain call of a task tool ended %s", t.status)
		}
		return &res, nil
	})
}

// rawJSON is a result given as JSON.
type rawJSON struct {
	mcp.ResultBase
	b []byte
}

func (r *rawJSON) MarshalJSON() ([]byte, error) { return r.b, nil }

func raw(v any) *rawJSON {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &rawJSON{b: b}
}

// patched marshals a go-sdk result and then edits its JSON.
type patched struct {
	mcp.ResultBase
	inner mcp.Result
	patch func(map[string]any)
}

func (p *patched) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(p.inner)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	p.patch(m)
	return json.Marshal(m)
}

func (fx *taskServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err != nil || fx.caps2025 == "" {
				return res, err
			}
			return &patched{inner: res, patch: func(m map[string]any) {
				var tc any
				_ = json.Unmarshal([]byte(fx.caps2025), &tc)
				m["capabilities"].(map[string]any)["tasks"] = tc
			}}, nil
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return &patched{inner: res, patch: func(m map[string]any) {
				fx.mu.Lock()
				defer fx.mu.Unlock()
				for _, t := range m["tools"].([]any) {
					tm := t.(map[string]any)
					if s := fx.support[tm["name"].(string)]; s != "" {
						tm["execution"] = map[string]any{"taskSupport": s}
					}
				}
			}}, nil
		case "tools/call":
			p := req.GetParams().(*mcp.CallToolParamsRaw)
			declared := false
			if caps, ok := p.Meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any); ok {
				if ext, ok := caps["extensions"].(map[string]any); ok {
					_, declared = ext["io.modelcontextprotocol/tasks"]
				}
			}
			fx.mu.Lock()
			fx.declaredExt = append(fx.declaredExt, declared)
			work := fx.work[p.Name]
			asked := fx.lastCallAsksTask()
			fx.mu.Unlock()
			if work == nil || (fx.ext && !declared) || (!fx.ext && !asked) {
				return next(ctx, method, req)
			}
			t := fx.newTask(p.Name, p.Arguments)
			go work(context.WithoutCancel(ctx), t)
			fx.mu.Lock()
			defer fx.mu.Unlock()
			if fx.ext {
				m := t.wire()
				m["resultType"] = "task"
				return raw(m), nil
			}
			return raw(map[string]any{"task": t.wire()}), nil
		}
		return next(ctx, method, req)
	}
}

// lastCallAsksTask reports whether the last recorded tools/call params carry "task". fx.mu
// is held.
func (fx *taskServer) lastCallAsksTask() bool {
	if len(fx.callParams) == 0 {
		return false
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	_ = json.Unmarshal(fx.callParams[len(fx.callParams)-1], &p)
	return len(p.Task) > 0
}

func (fx *taskServer) newTask(tool string, args json.RawMessage) *fxTask {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.seq++
	id := fmt.Sprintf("task-%d", fx.seq)
	if fx.newID != nil {
		id = fx.newID(fx.seq)
	}
	t := &fxTask{fx: fx, id: id, tool: tool, args: args, status: "working", changed: make(chan struct{}), poll: fx.poll, ttl: 60000, conn: fx.lastConn}
	fx.tasks[id] = t
	return t
}

// wire is the task's JSON object in the fixture's version. fx.mu is held.
func (t *fxTask) wire() map[string]any {
	m := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     "2026-01-01T00:00:00Z",
		"lastUpdatedAt": "2026-01-01T00:00:00Z",
	}
	if t.msg != "" {
		m["statusMessage"] = t.msg
	}
	pollKey, ttlKey := "pollInterval", "ttl"
	if t.fx.ext {
		pollKey, ttlKey = "pollIntervalMs", "ttlMs"
	}
	if t.poll != nil {
		m[pollKey] = t.poll
	}
	m[ttlKey] = t.ttl
	return m
}

// update changes the task under the lock and wakes waiters.
func (t *fxTask) update(f func(t *fxTask)) {
	t.fx.mu.Lock()
	f(t)
	close(t.changed)
	t.changed = make(chan struct{})
	onChange := t.fx.onChange
	t.fx.mu.Unlock()
	if onChange != nil {
		onChange(t)
	}
}

func (t *fxTask) set(status, msg string) {
	t.update(func(t *fxTask) { t.status, t.msg = status, msg })
}

func (t *fxTask) complete(text string) {
	res, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}})
	t.update(func(t *fxTask) {
		if t.status == "cancelled" {
			return
		}
		t.status, t.result = "completed", res
	})
}

func (t *fxTask) fail(code int64, msg string) {
	t.update(func(t *fxTask) {
		t.status, t.msg, t.rpcErr = "failed", msg, &jsonrpc.Error{Code: code, Message: msg}
	})
}

// ask asks the client for input and returns its answer (nil when the task was cancelled or
// ctx ended first): 2025 through tasks/result, the extension through inputRequests.
func (t *fxTask) ask(ctx context.Context, key string, p *mcp.ElicitParams) *mcp.ElicitResult {
	t.update(func(t *fxTask) {
		t.status, t.msg = "input_required", "need: "+key
		if t.fx.ext {
			b, _ := json.Marshal(map[string]any{"method": "elicitation/create", "params": p})
			if t.input == nil {
				t.input = map[string]json.RawMessage{}
			}
			t.input[key] = b
		} else {
			t.elicit = p
		}
	})
	for {
		t.fx.mu.Lock()
		ch := t.changed
		var got *mcp.ElicitResult
		if t.fx.ext {
			if b, ok := t.answers[key]; ok {
				got = &mcp.ElicitResult{}
				_ = json.Unmarshal(b, got)
				delete(t.input, key)
			}
		} else if t.elicitAnswer != nil {
			got, t.elicitAnswer = t.elicitAnswer, nil
		}
		done := t.cancelled
		t.fx.mu.Unlock()
		if got != nil {
			t.set("working", "answered: "+key)
			return got
		}
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

func (fx *taskServer) task(id string) (*fxTask, error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	t := fx.tasks[id]
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}
	}
	return t, nil
}

func (fx *taskServer) get(id string) (*rawJSON, error) {
	t, err := fx.task(id)
	fx.mu.Lock()
	fx.gets++
	fx.mu.Unlock()
	if err != nil {
		return nil, err
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	m := t.wire()
	if fx.ext {
		m["resultType"] = "complete"
		switch t.status {
		case "completed":
			m["result"] = t.result
		case "failed":
			m["error"] = t.rpcErr
		case "input_required":
			m["inputRequests"] = maps.Clone(t.input)
		}
	}
	if fx.getHook != nil {
		return raw(fx.getHook(t, m)), nil
	}
	return raw(m), nil
}

// result is 2025's tasks/result: deliver the pending elicitation, block until the end.
func (fx *taskServer) result(ctx context.Context, ss *mcp.ServerSession, id string) (*rawJSON, error) {
	t, err := fx.task(id)
	if err != nil {
		return nil, err
	}
	for {
		fx.mu.Lock()
		ch, status, p := t.changed, t.status, t.elicit
		fx.mu.Unlock()
		fx.mu.Lock()
		failedWithResult := status == "failed" && t.rpcErr == nil
		fx.mu.Unlock()
		switch {
		case status == "completed" || failedWithResult:
			fx.mu.Lock()
			var members map[string]json.RawMessage // as sent (the structured content's key order)
			_ = json.Unmarshal(t.result, &members)
			m := map[string]any{}
			for k, v := range members {
				m[k] = v
			}
			fx.mu.Unlock()
			m["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": cmp.Or(fx.relatedID, id)}}
			return raw(m), nil
		case status == "failed":
			return nil, t.rpcErr
		case status == "cancelled":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task cancelled"}
		}
		if p != nil {
			q := *p
			q.Meta = mcp.Meta{"io.modelcontextprotocol/related-task": map[string]any{"taskId": cmp.Or(fx.relatedID, id)}}
			res, err := ss.Elicit(ctx, &q)
			if err != nil {
				res = &mcp.ElicitResult{Action: "cancel"}
			}
			t.update(func(t *fxTask) { t.elicitAnswer, t.elicit = res, nil })
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (fx *taskServer) cancel(id string) (*rawJSON, error) {
	t, err := fx.task(id)
	if err != nil {
		return nil, err
	}
	fx.mu.Lock()
	fx.cancels = append(fx.cancels, id)
	terminal := t.status == "completed" || t.status == "failed" || t.status == "cancelled"
	fx.mu.Unlock()
	if terminal && !fx.ext {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Cannot cancel task: already in terminal status"}
	}
	t.update(func(t *fxTask) { t.status, t.msg, t.cancelled = "cancelled", "cancelled on request", true })
	if fx.ext {
		return raw(map[string]any{"resultType": "complete"}), nil
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return raw(t.wire()), nil
}

func (fx *taskServer) update(id string, responses map[string]json.RawMessage) (*rawJSON, error) {
	t, err := fx.task(id)
	if err != nil {
		return nil, err
	}
	fx.mu.Lock()
	fx.updates = append(fx.updates, responses)
	fx.mu.Unlock()
	t.update(func(t *fxTask) {
		if t.answers == nil {
			t.answers = map[string]json.RawMessage{}
		}
		for k, v := range responses {
			if _, ok := t.input[k]; ok {
				t.answers[k] = v
			}
		}
	})
	return raw(map[string]any{"resultType": "complete"}), nil
}

// config returns a ServerConfig reaching the fixture in process; 2025 fixtures are pinned
// to 2025-11-25 (go-sdk's server speaks 2026-07-28 too).
func (fx *taskServer) config(id string) bridge.ServerConfig {
	cfg := bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := fx.srv.Connect(context.Background(), &recordingTransport{st, fx}, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	if !fx.ext {
		cfg.ProtocolVersion = "2025-11-25"
	}
	return cfg
}

// httpConfig serves the fixture over Streamable HTTP (stateless, so any number of clients,
// across "restarts", reach the same tasks).
func (fx *taskServer) httpConfig(t testing.TB, id string) bridge.ServerConfig {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fx.recordHTTP(r)
		if fx.serveTaskListen(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return bridge.ServerConfig{ID: id, Type: "http", URL: ts.URL}
}

// recordingTransport records the raw params of the tools/call requests the server reads.
type recordingTransport struct {
	inner mcp.Transport
	fx    *taskServer
}

func (r *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &recordingConn{c, r.fx}
	r.fx.mu.Lock()
	r.fx.conns = append(r.fx.conns, rc)
	r.fx.mu.Unlock()
	return rc, nil
}

type recordingConn struct {
	mcp.Connection
	fx *taskServer
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		c.fx.mu.Lock()
		c.fx.callParams = append(c.fx.callParams, append(json.RawMessage(nil), req.Params...))
		c.fx.lastConn = c
		c.fx.mu.Unlock()
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "subscriptions/listen" {
		var p struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		}
		_ = json.Unmarshal(req.Params, &p)
		c.fx.mu.Lock()
		for _, id := range p.Notifications.TaskIDs {
			if c.fx.listened == nil {
				c.fx.listened = map[string][]notifier{}
			}
			c.fx.listened[id] = append(c.fx.listened[id], c)
		}
		c.fx.mu.Unlock()
	}
	return m, err
}

func (fx *taskServer) recordHTTP(r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		return
	}
	body, err := readAllRestore(r)
	if err != nil {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	switch {
	case req.Method == "tools/call":
		fx.callParams = append(fx.callParams, append(json.RawMessage(nil), req.Params...))
	case strings.HasPrefix(req.Method, "tasks/"):
		fx.nameHeaders = append(fx.nameHeaders, r.Header.Get("Mcp-Name"))
	}
}

// counts returns what clients sent so far.
func (fx *taskServer) counts() (gets int, cancels []string, updates int) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.gets, append([]string(nil), fx.cancels...), len(fx.updates)
}

// readAllRestore reads a request body and puts it back for the next handler.
func readAllRestore(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
