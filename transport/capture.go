package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	methodToolsList = "tools/list"
	methodToolsCall = "tools/call"
)

// maxCaptureBytes caps the bytes buffered to capture one JSON response body or
// one SSE event. Larger ones are passed to go-sdk untouched but not captured.
const maxCaptureBytes = 64 << 20

// capture collects the raw tool objects of tools/list responses. It is safe
// for concurrent use.
type capture struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // IDs of tools/list requests sent, not yet answered
	tools   []json.RawMessage
	taps    map[jsonrpc.ID]*Tap // requests followed by a Tap (tap.go), not yet answered
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
	return len(c.pending) > 0 || len(c.taps) > 0
}

// response handles an incoming response. Results of expected IDs are decoded
// as {"tools":[...]} and their elements appended in order.
func (c *capture) response(id jsonrpc.ID, result json.RawMessage) {
	c.tapped(id, result)
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

// wireMessage is the subset of a JSON-RPC message the capture needs.
type wireMessage struct {
	ID     any             `json:"id"`
	Method *string         `json:"method"`
	Result json.RawMessage `json:"result"`
}

// forEachMessage decodes data as one JSON-RPC message or a batch (array) of
// them and calls f for each element that decodes. Invalid input is ignored:
// go-sdk reports protocol errors, the capture only observes.
func forEachMessage(data []byte, f func(id jsonrpc.ID, method *string, result json.RawMessage)) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	one := func(raw []byte) {
		var m wireMessage
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		id, err := jsonrpc.MakeID(m.ID)
		if err != nil || !id.IsValid() {
			return
		}
		f(id, m.Method, m.Result)
	}
	if data[0] != '[' {
		one(data)
		return
	}
	var batch []json.RawMessage
	if json.Unmarshal(data, &batch) != nil {
		return
	}
	for _, raw := range batch {
		one(raw)
	}
}

// observeRequests records the tools/list requests in an outgoing HTTP body
// and reports whether there were any.
func (c *capture) observeRequests(body []byte) bool {
	if !bytes.Contains(body, []byte(methodToolsList)) {
		return false
	}
	found := false
	forEachMessage(body, func(id jsonrpc.ID, method *string, _ json.RawMessage) {
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
	forEachMessage(data, func(id jsonrpc.ID, method *string, result json.RawMessage) {
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
	env    *envelope
	close  func() error // shared teardown; it must close the inner Connection
	direct directCalls  // calls made with Conn.CallTool (direct.go)
	one    [1]jsonrpc.Message
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.direct.terminate(err)
			return nil, err
		}
		r, ok := msg.(*jsonrpc.Response)
		if !ok {
			return msg, nil
		}
		c.one[0] = r
		if len(c.direct.deliver(c.one[:])) == 0 {
			continue // a direct call's
		}
		c.one[0] = nil
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
		case methodDiscover:
			c.env.observe(r.Params)
		case methodToolsCall:
			msg = c.direct.standIn(ctx, r, msg)
		}
	}
	msg = c.cap.tap(ctx, msg) // tap.go: a Tap on ctx follows the request
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Close() error { return c.close() }
