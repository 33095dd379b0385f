package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// Direct calls on a stateful Streamable HTTP session (protocols before 2026-07-28): go-sdk
// keeps the session (initialize, the standalone GET stream, notifications, every method but
// tools/call) and a direct tools/call is one POST beside it, carrying the session's
// Mcp-Session-Id and the negotiated MCP-Protocol-Version as go-sdk's own requests do. The
// connection's RoundTripper tells the client what go-sdk sees: the session ID of the first
// successful POST answer that carries one, and the capabilities initialize declared
// (HTTPSession).
//
// A server may send requests on the POST's stream (ping, roots/list, sampling,
// elicitation). go-sdk would hand them to the client's handlers; a direct call cannot. So
// the direct path is taken only on a session whose initialize declared none of roots,
// sampling and elicitation (no handler can be configured for them: go-sdk declares a
// capability whenever it has a handler), and the direct client answers such requests with
// the reply go-sdk gives without a handler (answerServerRequest), POSTed with the session
// ID. Progress notifications on the stream reach CallOptions.OnProgress; other
// notifications on it are dropped (go-sdk's client has no handler the bridge relies on for
// them there: servers send list changes on the standalone stream). A 404 answer means the
// server forgot the session: the error wraps mcp.ErrSessionMissing with go-sdk's text, so
// that the caller reconnects. A call whose context ends gets notifications/cancelled
// POSTed, as go-sdk sends it. When go-sdk's session ends (its standalone stream found the
// session gone, say), the direct calls still in flight end with it, with the error go-sdk
// fails its own calls with (Client.End).

// HTTPSession is what a Streamable HTTP connection's RoundTripper records of go-sdk's own
// exchanges for direct calls on a stateful session. The zero value is ready to use; its
// methods are safe for concurrent use.
type HTTPSession struct {
	id          atomic.Pointer[string]
	initialized atomic.Bool // initialize was sent
	handlers    atomic.Bool // it declared roots, sampling or elicitation

	mu       sync.Mutex
	inflight map[int64]context.CancelCauseFunc // direct calls in flight, by JSON-RPC ID
	ended    error                             // why go-sdk's session ended, once it did
}

// begin registers direct call n, whose context cancel cancels; it reports the session's
// end instead when it already ended.
func (s *HTTPSession) begin(n int64, cancel context.CancelCauseFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != nil {
		return s.ended
	}
	if s.inflight == nil {
		s.inflight = make(map[int64]context.CancelCauseFunc)
	}
	s.inflight[n] = cancel
	return nil
}

// done forgets direct call n.
func (s *HTTPSession) done(n int64) {
	s.mu.Lock()
	delete(s.inflight, n)
	s.mu.Unlock()
}

// sessionEnded is the cause a direct call's context is cancelled with when go-sdk's
// session ended.
type sessionEnded struct{ err error }

func (e *sessionEnded) Error() string { return e.err.Error() }
func (e *sessionEnded) Unwrap() error { return e.err }

// End says that go-sdk's session on the connection ended, with err (ClientSession.Wait's
// error; nil: it was closed): the direct calls in flight on a stateful Streamable HTTP
// session fail as go-sdk fails its own in-flight calls then, with `calling "tools/call": `
// and err (mcp.ErrConnectionClosed for nil), and so does any later one. It does nothing on
// other connections (their call table ends with the connection: Calls.Terminate).
func (c *Client) End(err error) {
	if c.http == nil {
		return
	}
	if err == nil {
		err = mcp.ErrConnectionClosed
	}
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != nil {
		return
	}
	s.ended = &sessionEnded{err}
	for n, cancel := range s.inflight {
		cancel(s.ended)
		delete(s.inflight, n)
	}
}

// statefulCall POSTs direct call n (body, with ID id, of tool name) on a stateful session,
// with a context that End cancels, and returns its result or go-sdk's error: ctx.Err()
// when ctx ended (then notifications/cancelled is sent, as go-sdk sends it), the session's
// end when End cut it off.
func (c *Client) statefulCall(ctx context.Context, n int64, body []byte, id jsonrpc.ID, name string, opts *CallOptions) (json.RawMessage, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if err := c.session.begin(n, cancel); err != nil {
		return nil, fmt.Errorf("calling %q: %w", methodToolsCall, err)
	}
	result, err := c.post(cctx, body, id, name, nil, opts)
	c.session.done(n)
	if err == nil {
		return result, nil
	}
	if ctx.Err() != nil {
		go c.cancelStateful(ctx, id, ctx.Err(), opts)
		return nil, ctx.Err()
	}
	if se, ok := context.Cause(cctx).(*sessionEnded); ok {
		return nil, fmt.Errorf("calling %q: %w", methodToolsCall, se.err)
	}
	return nil, fmt.Errorf("calling %q: %w", methodToolsCall, err)
}

// Initializing records an outgoing initialize request's body (one message or a batch).
func (s *HTTPSession) Initializing(body []byte) {
	msgs, err := DecodeLine(body, nil)
	if err != nil {
		return
	}
	for _, m := range msgs {
		r, ok := m.(*jsonrpc.Request)
		if !ok || r.Method != "initialize" {
			continue
		}
		var caps []byte
		forMembers(r.Params, func(key string, val []byte) bool {
			if key == "capabilities" {
				caps = val
			}
			return true
		})
		handlers := false
		forMembers(caps, func(key string, val []byte) bool {
			switch key {
			case "roots", "sampling", "elicitation":
				handlers = handlers || !isNull(val)
			}
			return true
		})
		s.handlers.Store(handlers)
		s.initialized.Store(true)
	}
}

// Answered records the Mcp-Session-Id of a successful answer to one of go-sdk's POSTs: the
// first one seen is the session's, as go-sdk keeps it.
func (s *HTTPSession) Answered(h http.Header) {
	if s.id.Load() != nil {
		return
	}
	if id := h.Get(sessionIDHeader); id != "" {
		s.id.CompareAndSwap(nil, &id)
	}
}

// ID returns the session ID, or "" when the server gave none.
func (s *HTTPSession) ID() string {
	if p := s.id.Load(); p != nil {
		return *p
	}
	return ""
}

// direct reports whether direct calls may be made on the session: initialize was seen and
// declared no capability whose server requests go-sdk's handlers would answer.
func (s *HTTPSession) direct() bool { return s.initialized.Load() && !s.handlers.Load() }

// HTTPSession returns the connection's session record, for its RoundTripper to fill; nil
// on a connection that is not Streamable HTTP.
func (c *Client) HTTPSession() *HTTPSession {
	if c.http == nil {
		return nil
	}
	return &c.session
}

const sessionIDHeader = "Mcp-Session-Id"

// statefulHeaders sets the headers go-sdk's streamable client puts on a request of a
// stateful session: the protocol version and the session ID (no Mcp-Method, Mcp-Name or
// Mcp-Param-*: those are 2026-07-28's).
func (c *Client) statefulHeaders(h http.Header, protocol string) {
	h["Mcp-Protocol-Version"] = []string{protocol}
	if id := c.session.ID(); id != "" {
		h[sessionIDHeader] = []string{id}
	}
}

// answerServerRequest returns what go-sdk's client answers request m with when it has no
// handler for it (see the comment at the top of the file).
func answerServerRequest(m *jsonrpc.Request) *jsonrpc.Response {
	r := &jsonrpc.Response{ID: m.ID}
	switch m.Method {
	case "ping":
		r.Result = json.RawMessage(`{}`)
	case "roots/list":
		r.Result = json.RawMessage(`{"roots":[]}`)
	case "sampling/createMessage":
		r.Error = &jsonrpc.Error{Code: -31001, Message: "client does not support CreateMessage"}
	case "elicitation/create":
		r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "client does not support elicitation"}
	default:
		r.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + strconv.Quote(m.Method)}
	}
	return r
}

// sendMessage POSTs one message go-sdk would send on the session beside a direct call (the
// answer to a server's request, notifications/cancelled) and discards the answer.
func (c *Client) sendMessage(ctx context.Context, m jsonrpc.Message, protocol string, opts *CallOptions) {
	body, err := AppendMessage(nil, m)
	if err != nil {
		return
	}
	body = body[:len(body)-1]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.http.Endpoint, nil)
	if err != nil {
		return
	}
	req.Body = DirectBody{bytes.NewReader(body)}
	req.ContentLength = int64(len(body))
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Accept"] = []string{"application/json, text/event-stream"}
	c.statefulHeaders(req.Header, protocol)
	oh := c.http.OAuth
	if opts.OAuth != nil {
		oh = opts.OAuth
	}
	if bearer(ctx, oh, req.Header) != nil {
		return
	}
	resp, err := c.http.Client.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// cancelStateful tells a stateful session's server that direct call id was abandoned, as
// go-sdk does (notifications/cancelled with the context's error as the reason).
func (c *Client) cancelStateful(ctx context.Context, id jsonrpc.ID, why error, opts *CallOptions) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
	defer cancel()
	n, _ := id.Raw().(int64)
	params := []byte(`{"requestId":` + strconv.FormatInt(n, 10) + `,"reason":`)
	params = jsonstr.Append(params, why.Error())
	params = append(params, '}')
	c.sendMessage(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params}, opts.Protocol, opts)
}
