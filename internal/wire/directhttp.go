package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// Direct calls over Streamable HTTP on protocol 2026-07-28, which is stateless: a
// tools/call is one POST carrying everything the server needs (the Envelope in _meta, the
// protocol-version, Mcp-Method, Mcp-Name and Mcp-Param-* headers), answered by one JSON
// object or an event stream scoped to the request. The POST goes through the connection's
// own http.Client, so the RoundTripper adds the configured and per-call headers, restores
// the real endpoint, bounds the response body, marks the server reached and redacts
// errors, exactly as for go-sdk's requests; OAuth is applied here the way go-sdk's
// streamable client applies it (a bearer token from the handler's token source; on 401 or
// 403, Authorize and one retry). Errors have the shape go-sdk's session gives them.

// errRejected is go-sdk's "rejected by transport" error (jsonrpc2.ErrRejected, code -32005):
// an HTTP failure that did not break the connection.
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// methodToolsCall is the method of a direct call.
const methodToolsCall = "tools/call"

// callSummary prefixes transport errors of a direct HTTP call, as go-sdk's Write does.
const callSummary = `sending "tools/call"`

// drainWait bounds how long a finished event stream is read to its end, so that its
// connection can be reused; a server that keeps it open longer gets it closed.
const drainWait = 100 * time.Millisecond

// DirectBody is the body of a direct POST; the connection's RoundTripper recognises it and
// skips the body inspection it does for go-sdk's requests.
type DirectBody struct{ *bytes.Reader }

// Close implements io.Closer.
func (DirectBody) Close() error { return nil }

// MaxCaptureBytes caps the bytes buffered to read one JSON response body or one SSE event
// when a connection has no per-message limit.
const MaxCaptureBytes = 64 << 20

// httpCall POSTs one tools/call and returns its result.
func (c *Client) httpCall(ctx context.Context, params json.RawMessage, p *mcp.CallToolParams, opts *CallOptions) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := c.httpIDs.Add(-1)
	id, _ := jsonrpc.MakeID(float64(n)) // exact: |n| < 2^53
	body, err := AppendMessage(nil, &jsonrpc.Request{ID: id, Method: methodToolsCall, Params: params})
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", methodToolsCall, err)
	}
	body = body[:len(body)-1] // the newline
	if !opts.modern() {
		return c.statefulCall(ctx, n, body, id, p.Name, opts) // stateful.go
	}
	var args json.RawMessage
	if a, ok := p.Arguments.(json.RawMessage); ok {
		args = a
	} else if p.Arguments != nil {
		args, _ = json.Marshal(p.Arguments)
	}
	hdr := paramHeaders(c.bindings.forTool(p.Name, opts.InputSchema), args)
	result, err := c.post(ctx, body, id, p.Name, hdr, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", methodToolsCall, err)
	}
	return result, nil
}

// post sends body and reads the response with ID id.
func (c *Client) post(ctx context.Context, body []byte, id jsonrpc.ID, name string, params map[string]string, opts *CallOptions) (json.RawMessage, error) {
	oh := c.http.OAuth
	if opts.OAuth != nil {
		oh = opts.OAuth
	}
	do := func() (*http.Request, *http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.http.Endpoint, nil)
		if err != nil {
			return nil, nil, err
		}
		req.Body = DirectBody{bytes.NewReader(body)}
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return DirectBody{bytes.NewReader(body)}, nil }
		h := req.Header
		if opts.modern() {
			v := []string{"application/json", "application/json, text/event-stream", opts.Protocol, methodToolsCall, headerValue(name)}
			h["Content-Type"], h["Accept"], h["Mcp-Protocol-Version"], h["Mcp-Method"], h["Mcp-Name"] = v[0:1:1], v[1:2:2], v[2:3:3], v[3:4:4], v[4:5:5]
			for k, v := range params {
				h.Set(k, v)
			}
			if sid := c.session.ID(); sid != "" {
				h[sessionIDHeader] = []string{sid} // as go-sdk: a server that gave one gets it back
			}
		} else {
			v := []string{"application/json", "application/json, text/event-stream"}
			h["Content-Type"], h["Accept"] = v[0:1:1], v[1:2:2]
			c.statefulHeaders(h, opts.Protocol)
		}
		if err := bearer(ctx, oh, h); err != nil {
			return nil, nil, fmt.Errorf("%s: %w: %w", callSummary, errRejected, err)
		}
		resp, err := c.http.Client.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w: %w", callSummary, errRejected, err)
		}
		return req, resp, nil
	}
	req, resp, err := do()
	if err != nil {
		return nil, err
	}
	if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && oh != nil {
		if err := oh.Authorize(ctx, req, resp); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", callSummary, errRejected, err)
		}
		if _, resp, err = do(); err != nil {
			return nil, err
		}
	}
	defer resp.Body.Close()
	if err := checkStatus(resp, c.session.ID()); err != nil {
		return nil, err
	}
	switch ct := MediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		return c.readJSON(resp, id)
	case "text/event-stream":
		return c.readEvents(ctx, resp, id, opts)
	default:
		return nil, fmt.Errorf("%s: unsupported content type %q", callSummary, ct)
	}
}

// bearer sets the bearer token of OAuth handler oh, as go-sdk's streamable client does: an
// invalid_grant from the token source leaves the header off, so that the server's 401
// starts Authorize.
func bearer(ctx context.Context, oh auth.OAuthHandler, h http.Header) error {
	if oh == nil {
		return nil
	}
	ts, err := oh.TokenSource(context.WithoutCancel(ctx))
	if err != nil || ts == nil {
		return err
	}
	tok, err := tokenFor(ctx, ts)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			return nil
		}
		return err
	}
	if tok != nil {
		h.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return nil
}

// tokenFor is ts's token for a request bounded by ctx: a source that can wait for a refresh
// at ctx's end (bridge/auth's shared grants) does so, as the handler's transport does for
// go-sdk's requests.
func tokenFor(ctx context.Context, ts oauth2.TokenSource) (*oauth2.Token, error) {
	if w, ok := ts.(interface {
		TokenContext(context.Context) (*oauth2.Token, error)
	}); ok {
		return w.TokenContext(ctx)
	}
	return ts.Token()
}

// maxErrorBody bounds the body of a failed response read for its JSON-RPC error.
const maxErrorBody = 64 << 10

// checkStatus turns an unsuccessful status into go-sdk's error for it: 429 and 500–504 are
// transient (rejected), another failure with a JSON-RPC error in its body is that error
// (rejected), a 404 on session sid (not "") is mcp.ErrSessionMissing, and any other
// failure names the status.
func checkStatus(resp *http.Response, sid string) error {
	code := resp.StatusCode
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%w: %s: %v", errRejected, callSummary, http.StatusText(code))
	}
	if code >= 200 && code < 300 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if msgs, err := DecodeLine(body, nil); err == nil && len(msgs) == 1 {
		if r, ok := msgs[0].(*jsonrpc.Response); ok && r.Error != nil {
			return fmt.Errorf("%s: %w: %w: %v", callSummary, r.Error, errRejected, http.StatusText(code))
		}
	}
	if code == http.StatusNotFound && sid != "" {
		return fmt.Errorf("%s: failed to connect (session ID: %v): %w", callSummary, sid, mcp.ErrSessionMissing)
	}
	return fmt.Errorf("%s: %v", callSummary, http.StatusText(code))
}

// readJSON reads a JSON answer: one response with the call's ID.
func (c *Client) readJSON(resp *http.Response, id jsonrpc.ID) (json.RawMessage, error) {
	var body []byte
	var err error
	if n, limit := resp.ContentLength, c.http.Budget.Limit(); n > 0 && (limit <= 0 || n <= limit) {
		body = make([]byte, n)
		_, err = io.ReadFull(resp.Body, body)
	} else {
		body, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: failed to read body: %w", callSummary, err)
	}
	msgs, err := DecodeLine(body, nil)
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("%s: failed to decode response: %v", callSummary, ErrNotJSONRPC)
	}
	return answer(msgs[0], id)
}

// answer returns the result of response m to request id, or its error.
func answer(m jsonrpc.Message, id jsonrpc.ID) (json.RawMessage, error) {
	r, ok := m.(*jsonrpc.Response)
	if !ok || r.ID != id {
		return nil, fmt.Errorf("%s: the server answered with another message than the response to request %v", callSummary, id.Raw())
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// errNoResponse is go-sdk's error for an event stream that ended without the response.
var errNoResponse = errors.New("request terminated without response")

// readEvents reads an event stream until the response with the call's ID, handing
// progress notifications to opts.OnProgress and, on a stateful session, answering the
// server's requests as go-sdk does without handlers (stateful.go); the stream's other
// messages (notifications the bridge does not follow; requests, which protocol 2026-07-28
// does not allow here) are skipped. Events over the byte budget fail the call with the
// connection's Budget overrun error.
func (c *Client) readEvents(ctx context.Context, resp *http.Response, id jsonrpc.ID, opts *CallOptions) (json.RawMessage, error) {
	var (
		result json.RawMessage
		err    error
		done   bool
	)
	p := &SSEParser{Limit: MaxCaptureBytes}
	if limit := c.http.Budget.Limit(); limit > 0 {
		p.Limit = int(limit)
	}
	p.OnEvent = func(name string, data []byte) {
		if done || (name != "" && name != "message") {
			return
		}
		msgs, derr := DecodeLine(data, nil)
		if derr != nil || len(msgs) != 1 {
			err, done = fmt.Errorf("%s: failed to decode event: %v", callSummary, ErrNotJSONRPC), true
			return
		}
		switch m := msgs[0].(type) {
		case *jsonrpc.Response:
			if m.ID == id {
				result, err = answer(m, id)
				done = true
			}
		case *jsonrpc.Request:
			if m.ID.IsValid() && !opts.modern() {
				c.sendMessage(ctx, answerServerRequest(m), opts.Protocol, opts)
			}
			if m.Method == "notifications/progress" && !m.ID.IsValid() && opts.OnProgress != nil {
				var pp mcp.ProgressNotificationParams
				if json.Unmarshal(m.Params, &pp) == nil {
					opts.OnProgress(&pp)
				}
			}
		}
	}
	buf := make([]byte, 4<<10)
	read := func(body io.Reader) error {
		for !done {
			n, rerr := body.Read(buf)
			if n > 0 {
				p.Write(buf[:n])
			}
			switch {
			case p.over:
				return fmt.Errorf("%s: %w", callSummary, c.http.Budget.Overrun("SSE event"))
			case p.dead && !done:
				return fmt.Errorf("%s: malformed event stream", callSummary)
			}
			if rerr != nil {
				if !done {
					p.Finish()
				}
				if done {
					break
				}
				if errors.Is(rerr, io.EOF) {
					return errNoResponse
				}
				return fmt.Errorf("%s: reading the event stream: %w", callSummary, rerr)
			}
		}
		return nil
	}
	rerr := read(resp.Body)
	if rerr == nil {
		drain(resp.Body)
	}
	// A stateful session's stream that ended without the answer but with an event ID is
	// resumed as go-sdk resumes it: a GET with Last-Event-ID after the server's retry delay,
	// at most maxResumes times in a row without a new event ID.
	prev, tries := "", 0
	for errors.Is(rerr, errNoResponse) && !opts.modern() && p.LastID != "" {
		if p.LastID != prev {
			prev, tries = p.LastID, 0
		}
		if tries++; tries > maxResumes {
			return nil, fmt.Errorf("%s: exceeded %d retries without progress (session ID: %v)", callSummary, maxResumes, c.session.ID())
		}
		body, err := c.resume(ctx, p.LastID, p.Retry, tries, opts)
		if err != nil {
			return nil, err
		}
		p.line, p.evBytes = p.line[:0], 0
		rerr = read(body)
		if rerr == nil {
			drain(body)
		}
		body.Close()
	}
	if rerr != nil {
		return nil, rerr
	}
	return result, err
}

// maxResumes bounds the reconnections of a call's event stream that bring no new event ID
// (go-sdk's default MaxRetries); resumeDelay is the wait before one when the server gave no
// retry field, growing by half at each further try.
const (
	maxResumes  = 5
	resumeDelay = time.Second
)

// resume waits (the server's retry, or resumeDelay grown for try), then GETs the session's
// stream from event lastID, and returns its body.
func (c *Client) resume(ctx context.Context, lastID string, retry time.Duration, try int, opts *CallOptions) (io.ReadCloser, error) {
	delay := retry
	if delay <= 0 {
		delay = min(time.Duration(float64(resumeDelay)*math.Pow(1.5, float64(try-1))), maxRetryField)
	}
	t := time.NewTimer(delay)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	case <-t.C:
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.http.Endpoint, nil)
	if err != nil {
		return nil, err
	}
	req.Header["Accept"] = []string{"text/event-stream"}
	req.Header["Last-Event-Id"] = []string{lastID}
	c.statefulHeaders(req.Header, opts.Protocol)
	oh := c.http.OAuth
	if opts.OAuth != nil {
		oh = opts.OAuth
	}
	// The server has the call: no error here may read as one that never reached it
	// (errRejected), or the call would be sent again.
	if err := bearer(ctx, oh, req.Header); err != nil {
		return nil, fmt.Errorf("%s: resuming the event stream: %v", callSummary, err)
	}
	resp, err := c.http.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: failed to reconnect (session ID: %v): %v", callSummary, c.session.ID(), err)
	}
	if err := checkStatus(resp, c.session.ID()); err != nil {
		resp.Body.Close()
		if errors.Is(err, mcp.ErrSessionMissing) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: resuming the event stream: %v", callSummary, err)
	}
	if ct := MediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: resuming the event stream: unsupported content type %q", callSummary, ct)
	}
	return resp.Body, nil
}

// drain reads what is left of a finished stream, briefly, so that the connection is reused.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { _ = body.Close() })
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	t.Stop()
}
