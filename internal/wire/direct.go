package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// Direct calls: tools/call sent on the connection beside go-sdk's session. go-sdk's
// ClientSession.CallTool decodes every result twice through a decoder that allocates
// 32 KB each time (jsonrpc2's Await, then CallToolResult.UnmarshalJSON) and runs each call
// through its middleware chain and jsonrpc2's call table. A direct call has its own ID
// space (negative integers; go-sdk counts up from 1), its response is taken off the wire
// by the connection's Read (package transport's stdio and wrapped connections, through
// Calls) before go-sdk sees it, and an all-text result is decoded without those buffers. Everything else about the session (initialize, listings, notifications,
// progress, requests from the server, its end) stays go-sdk's.

// ErrNoDirectCall is returned by Client.CallTool when the connection cannot carry direct
// calls for the session's protocol (see Client.DirectCalls); the caller uses go-sdk's
// ClientSession instead.
var ErrNoDirectCall = errors.New("direct calls are not available on this connection")

// CallOptions are the settings of one Client.CallTool.
type CallOptions struct {
	// Protocol is the protocol version the session negotiated. From ModernProtocol on, the
	// request carries the per-request _meta Envelope (the one go-sdk sent with
	// server/discover) and the result is read by its resultType.
	Protocol string
	// InputSchema is the tool's inputSchema as listed. Over Streamable HTTP its
	// x-mcp-header markers are mirrored into Mcp-Param-* headers (SEP-2243).
	InputSchema json.RawMessage
	// OnProgress, when set, receives the notifications/progress a Streamable HTTP server
	// sends on the call's own response stream. On other transports they reach go-sdk's
	// session like every notification.
	OnProgress func(*mcp.ProgressNotificationParams)
	// Tap, when set, follows this call as a Tap on the context follows go-sdk's requests:
	// its Param member is added to the request, and a result its Keep accepts is kept in
	// it (Tap.Result) instead of being decoded: CallTool then returns an empty result.
	// (A task handle: the MCP tasks extension answers any tools/call with one.)
	Tap *Tap
	// Envelope, when set, is the per-request _meta to send (from CallEnvelope) in place
	// of the session's, unless p.Meta is set (then the session's is merged with it).
	Envelope json.RawMessage
	// SharedMeta says the caller only reads the result's _meta and does not keep it: the
	// decoded _meta (the same on most results of a server) may then be the one shared with
	// other results of the connection instead of a copy.
	SharedMeta bool
	// OAuth, when set, authorizes this call over Streamable HTTP in place of the
	// connection's own handler (HTTP.OAuth): the bearer token, and Authorize on 401 or 403.
	// A multi-user host's call for one user on a stateless server carries that user's.
	OAuth auth.OAuthHandler
}

// modern reports whether o asks for protocol 2026-07-28 or later.
func (o *CallOptions) modern() bool { return o != nil && o.Protocol >= ModernProtocol }

// cancelNotifyTimeout bounds the notifications/cancelled write of an abandoned direct
// call, as go-sdk bounds its own.
const cancelNotifyTimeout = 5 * time.Second

func (o *CallOptions) tap() *Tap {
	if o == nil || o.Tap == nil || o.Tap.Method != "tools/call" {
		return nil
	}
	return o.Tap
}

func optsProtocol(o *CallOptions) string {
	if o == nil {
		return ""
	}
	return o.Protocol
}

// encodeCallToolParams encodes p like go-sdk (no HTML escaping; nil arguments become {}),
// copying raw arguments instead of re-encoding them. env, when p.Meta is nil, is an
// encoded _meta object to send as p's _meta.
func encodeCallToolParams(p *mcp.CallToolParams, env json.RawMessage) (json.RawMessage, error) {
	if p == nil {
		p = &mcp.CallToolParams{}
	}
	args, isRaw := p.Arguments.(json.RawMessage)
	if p.Meta == nil && (p.Arguments == nil || isRaw) && p.InputResponses == nil && p.RequestState == "" {
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		} else if !json.Valid(args) {
			return nil, errors.New("arguments are not valid JSON")
		}
		buf := make([]byte, 0, len(p.Name)+len(args)+len(env)+34)
		buf = append(buf, '{')
		if env != nil {
			buf = append(buf, `"_meta":`...)
			buf = append(buf, env...)
			buf = append(buf, ',')
		}
		buf = append(buf, `"name":`...)
		buf = jsonstr.Append(buf, p.Name)
		buf = append(buf, `,"arguments":`...)
		buf = append(buf, args...)
		return append(buf, '}'), nil
	}
	q := *p
	if q.Arguments == nil {
		q.Arguments = map[string]any{}
	}
	if q.Meta == nil && env != nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(env, &m); err != nil {
			return nil, err
		}
		q.Meta = make(mcp.Meta, len(m))
		for k, v := range m {
			q.Meta[k] = v
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&q); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// pendingCall is a direct call waiting for its response.
type pendingCall struct {
	done chan struct{} // buffered: receives one value when the call is answered or fails
	// result and rpcErr are the response's, set before done is sent on, unless err is.
	result json.RawMessage
	rpcErr error // the response's JSON-RPC error (a *jsonrpc.Error)
	err    error
	// deadline, when set, is when the connection's sweep fails the call with
	// errSwept (a Bound's deadline; see Calls.sweep).
	deadline time.Time
}

// errSwept is a pending call's error when the sweep found its deadline passed.
var errSwept = errors.New("the call's deadline passed")

// The connection's pool recycles the pendingCalls of answered calls: whoever takes a call
// out of Calls.pending sends on its done exactly once, so once its caller received
// that value nothing else touches it. (A call abandoned by its caller is not recycled.)
// The pool is the connection's, not the package's: a channel must not pass from one
// connection's goroutines to another's (a testing/synctest bubble forbids it).

// get takes a pendingCall from the pool, or makes one.
func (d *Calls) get() *pendingCall {
	if pc, ok := d.pool.Get().(*pendingCall); ok {
		return pc
	}
	return &pendingCall{done: make(chan struct{}, 1)}
}

// release returns an answered call to the pool.
func (d *Calls) release(pc *pendingCall) {
	pc.result, pc.rpcErr, pc.err, pc.deadline = nil, nil, nil, time.Time{}
	d.pool.Put(pc)
}

// finish answers the call; d.mu is not held and pc is out of d.pending.
func (pc *pendingCall) finish() { pc.done <- struct{}{} }

// Calls is the table of a connection's direct calls: a stdio or wrapped go-sdk
// connection's reader passes what it reads through Deliver (or DeliverResult), its writer
// passes go-sdk's tools/call requests through StandIn, and it calls Terminate when the
// connection ends. The zero value is ready to use.
type Calls struct {
	mu      sync.Mutex
	pending map[int64]*pendingCall
	lastID  int64     // the last call's ID (they count down from -1)
	term    error     // why the connection ended, once it did
	stand   standIns  // go-sdk requests a ping stands in for (resume.go)
	pool    sync.Pool // answered pendingCalls, for reuse
	// The sweep fails calls whose deadline passed: one timer per connection, armed for
	// the earliest deadline it knows of, instead of one per call (calls on a connection
	// mostly share a timeout, so a later call's deadline needs nothing).
	sweeper *time.Timer
	sweepAt time.Time // when sweeper fires; zero: not armed
}

// WriteFunc writes one message on a connection.
type WriteFunc func(context.Context, jsonrpc.Message) error

// call writes a request with a fresh negative ID and waits for its response, the end of
// the connection, or ctx.
func (d *Calls) call(ctx context.Context, write WriteFunc, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc := d.get()
	b, bounded := ctx.(*bound)
	if bounded && b.merged.Load() == nil {
		pc.deadline = b.deadline
	} else {
		bounded = false
	}
	d.mu.Lock()
	if d.term != nil {
		err := d.term
		d.mu.Unlock()
		d.release(pc)
		return nil, fmt.Errorf("%w: calling %q: client is closing: %v", mcp.ErrConnectionClosed, method, err)
	}
	d.lastID--
	n := d.lastID
	if d.pending == nil {
		d.pending = make(map[int64]*pendingCall)
	}
	d.pending[n] = pc
	if bounded && (d.sweepAt.IsZero() || pc.deadline.Before(d.sweepAt)) {
		d.armSweep(pc.deadline)
	}
	d.mu.Unlock()
	id, _ := jsonrpc.MakeID(float64(n)) // exact: |n| < 2^53
	if err := write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		if d.forget(n) {
			d.release(pc)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	var err error
	if bounded {
		err = b.wait(pc.done)
	} else {
		select {
		case <-pc.done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		if d.forget(n) {
			d.release(pc) // nothing can answer it any more
			go notifyCancelled(write, n, ctx, err)
		}
		return nil, err
	}
	if pc.err == errSwept {
		d.release(pc) // the sweep took it out of pending
		go notifyCancelled(write, n, ctx, context.DeadlineExceeded)
		return nil, context.DeadlineExceeded
	}
	result, rpcErr, perr := pc.result, pc.rpcErr, pc.err
	d.release(pc)
	if perr != nil {
		return nil, fmt.Errorf("calling %q: %w", method, perr)
	}
	if rpcErr != nil {
		return nil, fmt.Errorf("calling %q: %w", method, rpcErr)
	}
	return result, nil
}

// forget drops a pending call and reports whether it was still pending.
func (d *Calls) forget(n int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.pending[n]
	delete(d.pending, n)
	return ok
}

// notifyCancelled tells the server that direct call n was abandoned.
func notifyCancelled(write WriteFunc, n int64, ctx context.Context, why error) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
	defer cancel()
	params := []byte(`{"requestId":` + strconv.FormatInt(n, 10) + `,"reason":`)
	params = jsonstr.Append(params, why.Error())
	params = append(params, '}')
	_ = write(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
}

// isDirect reports whether m is a response to a direct call (a negative integer ID).
// It returns the response itself whenever m is one.
func isDirect(m jsonrpc.Message) (*jsonrpc.Response, int64, bool) {
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		return nil, 0, false
	}
	n, ok := r.ID.Raw().(int64)
	return r, n, ok && n < 0
}

// Deliver hands responses to direct calls to their callers and returns the other
// messages, reusing msgs.
func (d *Calls) Deliver(msgs []jsonrpc.Message) []jsonrpc.Message {
	out := msgs[:0]
	for _, m := range msgs {
		r, n, ok := isDirect(m)
		if !ok {
			if r != nil {
				d.substitute(r)
			}
			out = append(out, m)
			continue
		}
		d.mu.Lock()
		pc := d.pending[n]
		delete(d.pending, n)
		d.mu.Unlock()
		if pc != nil { // else: a call abandoned by its caller
			pc.result, pc.rpcErr = r.Result, r.Error
			pc.finish()
		}
	}
	clear(msgs[len(out):])
	return out
}

// DeliverResult hands the result of direct call n, read off the wire by DirectResult, to
// its caller (a copy: result is in the reader's buffer).
func (d *Calls) DeliverResult(n int64, result []byte) {
	d.mu.Lock()
	pc := d.pending[n]
	delete(d.pending, n)
	d.mu.Unlock()
	if pc != nil { // else: a call abandoned by its caller
		pc.result = copyRaw(result)
		pc.finish()
	}
}

// armSweep arms the sweep for at; d.mu held.
func (d *Calls) armSweep(at time.Time) {
	d.sweepAt = at
	if d.sweeper == nil {
		d.sweeper = time.AfterFunc(time.Until(at), d.sweep)
		return
	}
	d.sweeper.Reset(time.Until(at))
}

// sweep fails the pending calls whose deadline passed and arms itself for the earliest
// deadline left.
func (d *Calls) sweep() {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweepAt = time.Time{}
	if d.term != nil {
		return
	}
	var next time.Time
	for n, pc := range d.pending {
		switch {
		case pc.deadline.IsZero():
		case !now.Before(pc.deadline):
			delete(d.pending, n)
			pc.err = errSwept
			pc.finish()
		case next.IsZero() || pc.deadline.Before(next):
			next = pc.deadline
		}
	}
	if !next.IsZero() {
		d.armSweep(next)
	}
}

// Terminate records the connection's end and fails every pending call with err.
func (d *Calls) Terminate(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.term == nil {
		d.term = err
	}
	if d.sweeper != nil {
		d.sweeper.Stop()
	}
	for n, pc := range d.pending {
		pc.err = err
		pc.finish()
		delete(d.pending, n)
	}
}

// decodeCallResult decodes a tools/call result into what go-sdk's decoding gives. On a
// modern protocol (2026-07-28 on) a resultType other than "complete", "input_required" or
// none is an error: the protocol says a client must treat an unknown one as invalid
// (go-sdk itself passes it over). mc, when not nil, remembers the last _meta decoded.
func decodeCallResult(raw json.RawMessage, modern bool, mc *metaCache) (*mcp.CallToolResult, error) {
	res, rt, err := decodeToolResult(raw, mc)
	if err != nil {
		return nil, err
	}
	if modern && rt != "" && rt != resultComplete && rt != resultInputRequired {
		return nil, fmt.Errorf("unrecognized resultType %q in the tools/call result", rt)
	}
	return res, nil
}

// resultType values of protocol 2026-07-28.
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
)

// decodeCallToolResult decodes a tools/call result into what go-sdk's decoding gives.
func decodeCallToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	res, _, err := decodeToolResult(raw, nil)
	return res, err
}

// decodeToolResult decodes a tools/call result into what go-sdk's decoding gives, and
// returns its resultType. An all-text result (the common case) is decoded here; anything
// else, or anything unusual, goes to go-sdk's own CallToolResult.UnmarshalJSON.
func decodeToolResult(raw json.RawMessage, mc *metaCache) (*mcp.CallToolResult, string, error) {
	if res, rt, ok := fastToolResult(raw, mc); ok {
		return res, rt, nil
	}
	res := new(mcp.CallToolResult)
	if len(raw) == 0 || isNull(raw) {
		return res, "", nil
	}
	if err := res.UnmarshalJSON(raw); err != nil {
		// A content block go-sdk cannot decode fails it all: decode around it (unknown.go).
		fixed, ok := ReplaceUnknownContent(raw)
		if !ok {
			return nil, "", err
		}
		*res = mcp.CallToolResult{}
		if err := res.UnmarshalJSON(fixed); err != nil {
			return nil, "", err
		}
	}
	var rt string
	if v, ok := memberValue(raw, "resultType"); ok {
		rt, _ = stringValue(v)
	}
	return res, rt, nil
}

// completeResult is an empty result as go-sdk decodes `{"resultType":"complete"}`: its
// result type is unexported, so a result that says "complete" starts as a copy of it.
var completeResult = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	_ = r.UnmarshalJSON([]byte(`{"resultType":"complete"}`)) // constant input: cannot fail
	return r
})

// fastToolResult decodes a result whose members are among content (text blocks with
// optional _meta only), structuredContent, isError, _meta and resultType "complete". It
// reports false for anything else.
func fastToolResult(raw []byte, mc *metaCache) (*mcp.CallToolResult, string, bool) {
	var content, structured, meta []byte
	var isError, complete bool
	obj := scanObject(raw)
	for {
		k, v, ok := obj.next()
		if !ok {
			break
		}
		switch {
		case keyIs(k, "content"):
			content = v
		case keyIs(k, "structuredContent"):
			structured = v
		case keyIs(k, "isError"):
			switch string(v) {
			case "true":
				isError = true
			case "false", "null":
				isError = false
			default:
				return nil, "", false
			}
		case keyIs(k, "_meta"):
			meta = v
		case keyIs(k, "resultType"):
			if !valueIs(v, resultComplete) {
				return nil, "", false
			}
			complete = true
		default:
			return nil, "", false
		}
	}
	if !obj.valid() {
		return nil, "", false
	}
	res := &mcp.CallToolResult{}
	rt := ""
	if complete {
		*res = completeResult()
		rt = resultComplete
	}
	res.IsError = isError
	if meta != nil {
		m, ok := mc.decode(meta)
		if !ok {
			return nil, "", false
		}
		res.Meta = m
	}
	if structured != nil && !isNull(structured) {
		if json.Unmarshal(structured, &res.StructuredContent) != nil {
			return nil, "", false
		}
	}
	if len(content) == 0 || isNull(content) {
		res.Content = []mcp.Content{}
		return res, rt, true
	}
	items := scanArray(content)
	for {
		item, ok := items.next()
		if !ok {
			break
		}
		tc, ok := textBlock(item, mc)
		if !ok {
			return nil, "", false
		}
		res.Content = append(res.Content, tc)
	}
	if !items.valid() {
		return nil, "", false
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return res, rt, true
}

// textBlock decodes a content block that is {"type":"text","text":…} with an optional
// _meta and nothing else.
func textBlock(item []byte, mc *metaCache) (*mcp.TextContent, bool) {
	tc := &mcp.TextContent{}
	isText := false
	obj := scanObject(item)
	for {
		k, v, ok := obj.next()
		if !ok {
			break
		}
		switch {
		case keyIs(k, "type"):
			if isText = valueIs(v, "text"); !isText {
				return nil, false
			}
		case keyIs(k, "text"):
			t, ok := stringValue(v)
			if !ok {
				return nil, false
			}
			tc.Text = t
		case keyIs(k, "_meta"):
			m, ok := mc.decode(v)
			if !ok {
				return nil, false
			}
			tc.Meta = m
		default:
			return nil, false
		}
	}
	return tc, obj.valid() && isText
}

// metaCache keeps the last _meta a connection decoded: a server sends the same one (its
// serverInfo, on protocol 2026-07-28) with every result, and copying the decoded value is
// far cheaper than decoding it again.
type metaCache struct {
	last atomic.Pointer[cachedMeta]
	// shared: decode hands out the cached value itself (CallOptions.SharedMeta's callers
	// only read it); otherwise copies.
	shared bool
}

type cachedMeta struct {
	raw []byte
	m   mcp.Meta // handed out only by a shared cache; others hand out copies
}

// maxCachedMeta bounds the _meta kept by a metaCache.
const maxCachedMeta = 1 << 10

// decode decodes a _meta value; mc may be nil.
func (mc *metaCache) decode(raw []byte) (mcp.Meta, bool) {
	if mc != nil {
		if c := mc.last.Load(); c != nil && bytes.Equal(c.raw, raw) {
			if mc.shared {
				return c.m, true
			}
			return copyMeta(c.m), true
		}
	}
	var m mcp.Meta
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	if mc != nil && len(raw) <= maxCachedMeta {
		kept := m
		if !mc.shared {
			kept = copyMeta(m)
		}
		mc.last.Store(&cachedMeta{raw: bytes.Clone(raw), m: kept})
	}
	return m, true
}

// copyMeta copies the maps and slices of a decoded _meta; strings, numbers and booleans
// are immutable and shared.
func copyMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = copyValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyValue(x)
		}
		return out
	}
	return v
}
