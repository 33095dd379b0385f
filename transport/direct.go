package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direct calls: tools/call sent on the connection beside go-sdk's session. go-sdk's
// ClientSession.CallTool decodes every result twice through a decoder that allocates
// 32 KB each time (jsonrpc2's Await, then CallToolResult.UnmarshalJSON) and runs each call
// through its middleware chain and jsonrpc2's call table. A direct call has its own ID
// space (negative integers; go-sdk counts up from 1), its response is taken off the wire
// by the connection's Read (stdioConn, captureConn) before go-sdk sees it, and an all-text result is decoded without those
// buffers. Everything else about the session (initialize, listings, notifications,
// progress, requests from the server, its end) stays go-sdk's.

// ErrNoDirectCall is returned by Conn.CallTool when the connection cannot carry direct
// calls (Streamable HTTP, whose connection go-sdk must own unwrapped, or not connected);
// the caller uses go-sdk's ClientSession instead. See Conn.DirectCalls.
var ErrNoDirectCall = errors.New("direct calls are not available on this connection")

// DirectCalls reports whether CallTool can be used: the connection is up and is stdio,
// in-process or legacy SSE.
func (c *Conn) DirectCalls() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.direct != nil
}

// cancelNotifyTimeout bounds the notifications/cancelled write of an abandoned direct
// call, as go-sdk bounds its own.
const cancelNotifyTimeout = 5 * time.Second

// CallTool sends tools/call with p on the connection without going through go-sdk's
// session, and returns the result as go-sdk's ClientSession.CallTool would: the same
// errors (a JSON-RPC error wrapped as `calling "tools/call": …`, ctx.Err() on
// cancellation, after which notifications/cancelled is sent; mcp.ErrConnectionClosed
// when the connection ended before the request was written) and the same result value.
// p.Arguments that is a json.RawMessage is sent as is (after a validity check), not
// re-encoded.
//
// It bypasses go-sdk's sending middleware and its protocol-2026 request metadata, so use
// it only for sessions that negotiated an earlier protocol and have no middleware. It
// returns ErrNoDirectCall when DirectCalls is false.
func (c *Conn) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	d, write := c.direct, c.directWrite
	c.mu.Unlock()
	if d == nil {
		return nil, ErrNoDirectCall
	}
	params, err := encodeCallToolParams(p)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
	}
	raw, err := d.call(ctx, write, "tools/call", params)
	if err != nil {
		return nil, err
	}
	return decodeCallToolResult(raw)
}

// encodeCallToolParams encodes p like go-sdk (no HTML escaping; nil arguments become {}),
// copying raw arguments instead of re-encoding them.
func encodeCallToolParams(p *mcp.CallToolParams) (json.RawMessage, error) {
	if p == nil {
		p = &mcp.CallToolParams{}
	}
	args, isRaw := p.Arguments.(json.RawMessage)
	if p.Meta == nil && (p.Arguments == nil || isRaw) {
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		} else if !json.Valid(args) {
			return nil, errors.New("arguments are not valid JSON")
		}
		buf := make([]byte, 0, len(p.Name)+len(args)+24)
		buf = append(buf, `{"name":`...)
		buf = appendString(buf, p.Name)
		buf = append(buf, `,"arguments":`...)
		buf = append(buf, args...)
		return append(buf, '}'), nil
	}
	q := *p
	if q.Arguments == nil {
		q.Arguments = map[string]any{}
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
	done chan struct{}
	resp *jsonrpc.Response // set before done is closed, unless err is
	err  error
}

// directCalls is the table of a connection's direct calls. The connection's reader
// passes what it reads through deliver, and calls terminate when it ends.
type directCalls struct {
	mu      sync.Mutex
	pending map[int64]*pendingCall
	lastID  int64 // the last call's ID (they count down from -1)
	term    error // why the connection ended, once it did
}

// writeFunc writes one message on a connection.
type writeFunc func(context.Context, jsonrpc.Message) error

// call writes a request with a fresh negative ID and waits for its response, the end of
// the connection, or ctx.
func (d *directCalls) call(ctx context.Context, write writeFunc, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc := &pendingCall{done: make(chan struct{})}
	d.mu.Lock()
	if d.term != nil {
		err := d.term
		d.mu.Unlock()
		return nil, fmt.Errorf("%w: calling %q: client is closing: %v", mcp.ErrConnectionClosed, method, err)
	}
	d.lastID--
	n := d.lastID
	if d.pending == nil {
		d.pending = make(map[int64]*pendingCall)
	}
	d.pending[n] = pc
	d.mu.Unlock()
	id, _ := jsonrpc.MakeID(float64(n)) // exact: |n| < 2^53
	if err := write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		d.forget(n)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		if d.forget(n) {
			go notifyCancelled(write, n, ctx)
		}
		return nil, ctx.Err()
	}
	if pc.err != nil {
		return nil, fmt.Errorf("calling %q: %w", method, pc.err)
	}
	if pc.resp.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", method, pc.resp.Error)
	}
	return pc.resp.Result, nil
}

// forget drops a pending call and reports whether it was still pending.
func (d *directCalls) forget(n int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.pending[n]
	delete(d.pending, n)
	return ok
}

// notifyCancelled tells the server that direct call n was abandoned.
func notifyCancelled(write writeFunc, n int64, ctx context.Context) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
	defer cancel()
	params := []byte(`{"requestId":` + strconv.FormatInt(n, 10) + `,"reason":`)
	params = appendString(params, ctx.Err().Error())
	params = append(params, '}')
	_ = write(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
}

// isDirect reports whether m is a response to a direct call (a negative integer ID).
func isDirect(m jsonrpc.Message) (*jsonrpc.Response, int64, bool) {
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		return nil, 0, false
	}
	n, ok := r.ID.Raw().(int64)
	return r, n, ok && n < 0
}

// deliver hands responses to direct calls to their callers and returns the other
// messages, reusing msgs.
func (d *directCalls) deliver(msgs []jsonrpc.Message) []jsonrpc.Message {
	out := msgs[:0]
	for _, m := range msgs {
		r, n, ok := isDirect(m)
		if !ok {
			out = append(out, m)
			continue
		}
		d.mu.Lock()
		pc := d.pending[n]
		delete(d.pending, n)
		d.mu.Unlock()
		if pc != nil { // else: a call abandoned by its caller
			pc.resp = r
			close(pc.done)
		}
	}
	clear(msgs[len(out):])
	return out
}

// terminate records the connection's end and fails every pending call with err.
func (d *directCalls) terminate(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.term == nil {
		d.term = err
	}
	for n, pc := range d.pending {
		pc.err = err
		close(pc.done)
		delete(d.pending, n)
	}
}

// decodeCallToolResult decodes a tools/call result into what go-sdk's decoding gives. An
// all-text result (the common case) is decoded here; anything else, or anything unusual,
// goes to go-sdk's own CallToolResult.UnmarshalJSON.
func decodeCallToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if res, ok := fastToolResult(raw); ok {
		return res, nil
	}
	res := new(mcp.CallToolResult)
	if len(raw) == 0 || isNull(raw) {
		return res, nil
	}
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return res, nil
}

// fastToolResult decodes a result whose members are among content (text blocks with
// optional _meta only), structuredContent, isError and _meta. It reports false for
// anything else.
func fastToolResult(raw []byte) (*mcp.CallToolResult, bool) {
	res := &mcp.CallToolResult{}
	var content []byte
	ok := forMembers(raw, func(key string, val []byte) bool {
		switch key {
		case "content":
			content = val
		case "structuredContent":
			if isNull(val) {
				res.StructuredContent = nil
				return true
			}
			var v any
			if json.Unmarshal(val, &v) != nil {
				return false
			}
			res.StructuredContent = v
		case "isError":
			switch string(val) {
			case "true":
				res.IsError = true
			case "false", "null":
				res.IsError = false
			default:
				return false
			}
		case "_meta":
			var m mcp.Meta
			if json.Unmarshal(val, &m) != nil {
				return false
			}
			res.Meta = m
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil, false
	}
	res.Content = []mcp.Content{}
	if len(content) == 0 || isNull(content) {
		return res, true
	}
	ok = forElements(content, func(item []byte) bool {
		tc := &mcp.TextContent{}
		isText := false
		if !forMembers(item, func(key string, val []byte) bool {
			switch key {
			case "type":
				t, ok := stringValue(val)
				isText = ok && t == "text"
				return isText
			case "text":
				t, ok := stringValue(val)
				tc.Text = t
				return ok
			case "_meta":
				var m mcp.Meta
				if json.Unmarshal(val, &m) != nil {
					return false
				}
				tc.Meta = m
				return true
			}
			return false
		}) || !isText {
			return false
		}
		res.Content = append(res.Content, tc)
		return true
	})
	return res, ok
}

// forMembers calls fn for each member of the JSON object b (whole), in order, with the
// key unescaped and the raw value; it reports false if b is not an object or fn refused.
func forMembers(b []byte, fn func(key string, val []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return false
		}
		key, ok := stringValue(b[i:kEnd])
		if !ok {
			return false
		}
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vEnd, err := skipValue(b, i, 1)
		if err != nil || !fn(key, b[i:vEnd]) {
			return false
		}
		i = skipSpace(b, vEnd)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		return i < len(b) && b[i] == '}' && skipSpace(b, i+1) == len(b)
	}
}

// forElements calls fn for each element of the JSON array b (whole); it reports false if
// b is not an array or fn refused.
func forElements(b []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		end, err := skipValue(b, i, 1)
		if err != nil || !fn(b[i:end]) {
			return false
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		return i < len(b) && b[i] == ']' && skipSpace(b, i+1) == len(b)
	}
}
