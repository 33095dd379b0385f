package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
)

const (
	methodToolsList = "tools/list"
	methodToolsCall = "tools/call"
)

// maxCaptureBytes caps the bytes buffered to capture one JSON response body or
// one SSE event. Larger ones are passed to go-sdk untouched but not captured.
const maxCaptureBytes = wire.MaxCaptureBytes

// capture collects the raw tool objects of tools/list responses. It is safe
// for concurrent use.
type capture struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // IDs of tools/list requests sent, not yet answered
	tools   []json.RawMessage
	taps    wire.Taps // requests followed by a Tap, not yet answered
	notes   notices   // notifications handed to the host (notify.go)
}

// expect records an outgoing tools/list request ID.
func (c *capture) expect(id jsonrpc.ID) {
	if !id.IsValid() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = make(map[jsonrpc.ID]struct{})
	}
	c.pending[id] = struct{}{}
}

// waiting reports whether any tools/list or tapped response is outstanding.
func (c *capture) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0 || c.taps.Waiting()
}

// response handles an incoming response. Results of expected IDs are decoded
// as {"tools":[...]} and their elements appended in order.
func (c *capture) response(id jsonrpc.ID, result json.RawMessage) {
	c.taps.Tapped(id, result)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return
	}
	delete(c.pending, id)
	var r struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil {
		return
	}
	// json.RawMessage.UnmarshalJSON copies, so the tools do not alias result.
	c.tools = append(c.tools, r.Tools...)
}

// take returns and clears the collected tools.
func (c *capture) take() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tools
	c.tools = nil
	return t
}

// observeRequests records the tools/list requests in an outgoing HTTP body
// and reports whether there were any.
func (c *capture) observeRequests(body []byte) bool {
	if !bytes.Contains(body, []byte(methodToolsList)) {
		return false
	}
	found := false
	wire.ForEachMessage(body, func(id jsonrpc.ID, method *string, _ json.RawMessage) {
		if method != nil && *method == methodToolsList {
			c.expect(id)
			found = true
		}
	})
	return found
}

// observeResponses handles the responses in an incoming JSON-RPC payload.
func (c *capture) observeResponses(data []byte) {
	if !c.waiting() {
		return
	}
	wire.ForEachMessage(data, func(id jsonrpc.ID, method *string, result json.RawMessage) {
		if method == nil {
			c.response(id, result)
		}
	})
}

// captureConn wraps a go-sdk Connection (in-process, legacy SSE) to observe
// tools/list traffic and carry direct calls, and routes Close through the
// owner's teardown.
type captureConn struct {
	mcp.Connection
	cap    *capture
	env    *wire.Envelope
	close  func() error // shared teardown; it must close the inner Connection
	direct wire.Calls   // calls made with the connection's wire.Client
	one    [1]jsonrpc.Message
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.direct.Terminate(err)
			return nil, err
		}
		r, ok := msg.(*jsonrpc.Response)
		if !ok {
			c.one[0] = msg
			if len(c.cap.notes.take(c.one[:])) == 0 {
				continue // handed to the host
			}
			c.one[0] = nil
			return msg, nil
		}
		c.one[0] = r
		if len(c.direct.Deliver(c.one[:])) == 0 {
			continue // a direct call's
		}
		c.one[0] = nil
		tolerateContent(r)
		c.cap.response(r.ID, r.Result)
		return r, nil
	}
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok {
		switch r.Method {
		case methodToolsList:
			// Record before writing: the response may be read before Write returns.
			c.cap.expect(r.ID)
		case wire.MethodDiscover:
			c.env.Observe(r.Params)
		case methodToolsCall:
			msg = c.direct.StandIn(ctx, r, msg)
		}
	}
	msg = c.cap.taps.Tap(ctx, msg) // a Tap on ctx follows the request
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Close() error { return c.close() }

// observeBody records the requests in an outgoing Streamable HTTP POST body made under
// ctx: tools/list requests for the capture, requests a Tap follows. It returns the body to
// send (rewritten for a Tap that adds a member) and whether a response is awaited that the
// capture needs to see.
func (c *capture) observeBody(ctx context.Context, body []byte) ([]byte, bool) {
	return c.taps.ObserveBody(ctx, body, c.observeRequests(body))
}
