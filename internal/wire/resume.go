package wire

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi-round-trip calls (SEP-2322) after a direct first round. When a direct call's
// result asks for input, the rest of the call is go-sdk's: its multi-round-trip loop
// fulfils the input requests with the client's handlers (elicitation with its schema
// checks and defaults) and retries with the responses and the request state. That loop
// starts with a request of its own, so the connection answers go-sdk's first tools/call
// with the result the direct call already got, instead of running the tool's first round
// on the server twice:
//
//   - stdio and in-process: a ping with go-sdk's request ID goes on the wire in its place
//     (go-sdk reads every response on its own reader, so the answer must come from the
//     server), and the ping's response reaches go-sdk carrying the saved result;
//   - Streamable HTTP: the connection's RoundTripper answers go-sdk's POST itself.
//
// go-sdk's later rounds go to the server as usual.

// InputRequiredError is CallTool's error for a result with input requests (resultType
// "input_required"). Result is that result as go-sdk decodes it.
type InputRequiredError struct {
	Result *mcp.CallToolResult
	raw    json.RawMessage // the result as the server sent it
	env    json.RawMessage // params of the stand-in ping (the envelope on modern protocols)
}

// Error says the call needs input.
func (e *InputRequiredError) Error() string {
	return "the server needs input to complete the tool call (multi-round-trip request)"
}

// Continue returns a copy of ctx under which go-sdk's ClientSession.CallTool, given the
// same params, finishes the call: its first tools/call on the connection is answered with
// Result without running the tool again, so its multi-round-trip loop (input requests
// fulfilled by the client's handlers, retries with the responses and the request state)
// takes over from there. Use the ctx for one CallTool.
func (e *InputRequiredError) Continue(ctx context.Context) context.Context {
	return context.WithValue(ctx, resumeKey{}, &resume{raw: e.raw, env: e.env})
}

type resumeKey struct{}

// resume is a saved first-round result waiting for go-sdk's first request.
type resume struct {
	raw  json.RawMessage
	env  json.RawMessage
	used atomic.Bool
}

// takeResume returns the saved result ctx carries, once.
func takeResume(ctx context.Context) *resume {
	r, _ := ctx.Value(resumeKey{}).(*resume)
	if r == nil || !r.used.CompareAndSwap(false, true) {
		return nil
	}
	return r
}

// Resuming reports whether ctx carries a saved first-round result
// (InputRequiredError.Continue), taken or not.
func Resuming(ctx context.Context) bool { return ctx.Value(resumeKey{}) != nil }

// TakeResume returns, once, the saved first-round result ctx carries: the answer to give
// go-sdk's first tools/call of the continued call instead of sending it (Streamable HTTP's
// RoundTripper answers the POST itself).
func TakeResume(ctx context.Context) (json.RawMessage, bool) {
	r := takeResume(ctx)
	if r == nil {
		return nil, false
	}
	return r.raw, true
}

// standIns maps the IDs of go-sdk requests that a ping stands in for to the results their
// responses must carry.
type standIns struct {
	n  atomic.Int32 // len(m), read without the lock on every response
	mu sync.Mutex
	m  map[jsonrpc.ID]json.RawMessage
}

// StandIn returns what to write for go-sdk's request r (msg): msg itself, or, when ctx
// carries a saved result (InputRequiredError.Continue), a ping with r's ID whose response
// will carry that result. Direct calls (negative IDs) are never stood in for.
func (d *Calls) StandIn(ctx context.Context, r *jsonrpc.Request, msg jsonrpc.Message) jsonrpc.Message {
	if n, ok := r.ID.Raw().(int64); !ok || n <= 0 {
		return msg
	}
	rs := takeResume(ctx)
	if rs == nil {
		return msg
	}
	d.stand.mu.Lock()
	if d.stand.m == nil {
		d.stand.m = make(map[jsonrpc.ID]json.RawMessage)
	}
	d.stand.m[r.ID] = rs.raw
	d.stand.n.Store(int32(len(d.stand.m)))
	d.stand.mu.Unlock()
	return &jsonrpc.Request{ID: r.ID, Method: "ping", Params: rs.env}
}

// substitute gives a response to a stood-in request the saved result.
func (d *Calls) substitute(r *jsonrpc.Response) {
	if d.stand.n.Load() == 0 {
		return
	}
	d.stand.mu.Lock()
	raw, ok := d.stand.m[r.ID]
	if ok {
		delete(d.stand.m, r.ID)
		d.stand.n.Store(int32(len(d.stand.m)))
	}
	d.stand.mu.Unlock()
	if ok {
		r.Result, r.Error = raw, nil
	}
}
