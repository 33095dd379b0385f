package wire

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Taps: what the bridge needs from a request go-sdk sends but cannot express or keep. go-sdk's
// CallToolParams has no "task" member (MCP 2025-11-25 task augmentation) and its decoded
// CallToolResult and InitializeResult drop what they do not model (a CreateTaskResult's
// task, the server's "tasks" capability). A Tap on the request's context asks the
// connection to add a member to the request's params on the way out and to keep a copy of
// its raw result on the way in, on every transport: the stdio and in-process/SSE
// connections see the context in Write, Streamable HTTP in the RoundTripper (go-sdk builds
// each POST with the call's context). The response is seen before go-sdk reads it, so the
// tap holds it by the time go-sdk's call returns.

// Tap follows the requests of one method sent under a context from WithTap. Set its
// fields before use; it is safe for concurrent use afterwards.
type Tap struct {
	// Method is the request method followed ("tools/call", "initialize").
	Method string
	// Param and Value, when Param is set, make every followed request carry
	// params[Param] = Value (replacing a member of that name). Value must be valid JSON.
	Param string
	Value json.RawMessage
	// Keep, when set, says from a result's raw bytes whether the tap keeps it (for
	// example only task handles, so that ordinary results are not copied). nil keeps
	// every result.
	Keep func(result json.RawMessage) bool
	// Structured, when set, makes the tap keep a copy of the structuredContent member of
	// the last followed result, as the server sent it (StructuredContent), whatever Keep
	// says: the server's key order, which go-sdk's decoding into a map loses. A result
	// without one keeps nothing.
	Structured bool

	mu         sync.Mutex
	result     json.RawMessage
	structured json.RawMessage
	undo       []func() // forget the requests followed (Done)
}

type tapKey struct{}

// WithTap returns a copy of ctx under which requests of t.Method are followed by t.
func WithTap(ctx context.Context, t *Tap) context.Context {
	return context.WithValue(ctx, tapKey{}, t)
}

// TapFrom returns the Tap ctx carries (WithTap), or nil.
func TapFrom(ctx context.Context) *Tap {
	if ctx == nil {
		return nil
	}
	t, _ := ctx.Value(tapKey{}).(*Tap)
	return t
}

// Done forgets the requests t follows whose response has not come (a call abandoned when
// its context ended): call it once the request returned. t keeps its result.
func (t *Tap) Done() {
	t.mu.Lock()
	undo := t.undo
	t.undo = nil
	t.mu.Unlock()
	for _, f := range undo {
		f()
	}
}

// Result returns a copy of the raw result of the last followed request's response that
// Keep accepted, or nil.
func (t *Tap) Result() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// StructuredContent returns the structuredContent member of the last followed result as
// the server sent it, when t.Structured asked for it and the result had one; else nil.
func (t *Tap) StructuredContent() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.structured
}

// offer keeps result when Keep accepts it, and its structuredContent when t.Structured.
func (t *Tap) offer(result json.RawMessage) {
	if len(result) == 0 {
		return
	}
	var sc json.RawMessage
	if t.Structured {
		if v, ok := memberValue(result, "structuredContent"); ok && !isNull(v) {
			sc = append(json.RawMessage(nil), v...) // result may alias a read buffer
		}
	}
	var kept json.RawMessage
	if t.Keep == nil || t.Keep(result) {
		kept = append(json.RawMessage(nil), result...)
	}
	t.mu.Lock()
	if t.Structured {
		t.structured = sc
	}
	if kept != nil {
		t.result = kept
	}
	t.mu.Unlock()
}

// Taps is a connection's table of the requests Taps follow, by JSON-RPC ID, until their
// responses come. The zero value is ready to use; it is safe for concurrent use.
type Taps struct {
	mu sync.Mutex
	m  map[jsonrpc.ID]*Tap
}

// Waiting reports whether a followed request's response is outstanding.
func (c *Taps) Waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m) > 0
}

// Tap records an outgoing request the context's Tap follows (whose params it may rewrite)
// before it is written, and returns the message to write.
func (c *Taps) Tap(ctx context.Context, msg jsonrpc.Message) jsonrpc.Message {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return msg
	}
	t := TapFrom(ctx)
	if t == nil || t.Method != r.Method {
		return msg
	}
	c.follow(r.ID, t)
	if t.Param == "" {
		return msg
	}
	params, err := setMember(r.Params, t.Param, t.Value)
	if err != nil {
		return msg // go-sdk encoded the params; they are an object. Sent as they are otherwise.
	}
	out := *r
	out.Params = params
	return &out
}

// follow records that the response to id goes to t.
func (c *Taps) follow(id jsonrpc.ID, t *Tap) {
	if !id.IsValid() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[jsonrpc.ID]*Tap)
	}
	c.m[id] = t
	t.mu.Lock()
	t.undo = append(t.undo, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.m[id] == t {
			delete(c.m, id)
		}
	})
	t.mu.Unlock()
}

// Tapped hands a response's result to the tap following id, if any.
func (c *Taps) Tapped(id jsonrpc.ID, result json.RawMessage) {
	c.mu.Lock()
	t := c.m[id]
	delete(c.m, id)
	c.mu.Unlock()
	if t != nil {
		t.offer(result)
	}
}

// setMember returns the JSON object obj with member name set to value, top-level key order
// kept otherwise and nothing re-escaped.
func setMember(obj json.RawMessage, name string, value json.RawMessage) (json.RawMessage, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || string(obj) == "null" {
		obj = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key == name {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeKey(&b, key)
		b.Write(v)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotObject // something after the object
	}
	if !first {
		b.WriteByte(',')
	}
	writeKey(&b, name)
	b.Write(value)
	b.WriteByte('}')
	return b.Bytes(), nil
}

var errNotObject = errors.New("params are not a JSON object")

func writeKey(b *bytes.Buffer, key string) {
	k, _ := json.Marshal(key) // a string always marshals
	b.Write(k)
	b.WriteByte(':')
}

// ObserveBody records the requests in an outgoing Streamable HTTP POST body made under
// ctx that a Tap follows. It returns the body to send (rewritten for a Tap that adds a
// member) and whether a response is awaited that the taps need to see. sentToolsList is
// the caller's own answer to that question (a tools/list it captures), returned when the
// taps have none.
func (c *Taps) ObserveBody(ctx context.Context, body []byte, sentToolsList bool) ([]byte, bool) {
	t := TapFrom(ctx)
	if t == nil || !bytes.Contains(body, []byte(t.Method)) {
		return body, sentToolsList
	}
	var msg jsonrpc.Message
	if m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(body)); err == nil {
		msg = m
	}
	if msg == nil { // a batch, or not a message: follow what can be followed, send as is
		followed := false
		ForEachMessage(body, func(id jsonrpc.ID, method *string, _ json.RawMessage) {
			if method != nil && *method == t.Method {
				c.follow(id, t)
				followed = true
			}
		})
		return body, sentToolsList || followed
	}
	out := c.Tap(ctx, msg)
	if r, ok := msg.(*jsonrpc.Request); !ok || r.Method != t.Method || !r.IsCall() {
		return body, sentToolsList
	}
	if out != msg {
		if enc, err := jsonrpc.EncodeMessage(out); err == nil {
			body = enc
		}
	}
	return body, true
}

// taskRoutingName returns the Mcp-Name value of an outgoing tasks/get, tasks/update or
// tasks/cancel request: its params.taskId, which the tasks extension requires over
// Streamable HTTP so that intermediaries can route a task's requests to the instance that
// holds it. A task ID is the server's string: one that is not a plain header token is sent
// in the SEP-2243 Base64 form, as go-sdk sends unsafe names. "" when body is not such a
// request.
func taskRoutingName(body []byte) string {
	if !bytes.Contains(body, []byte(`"tasks/`)) {
		return ""
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Params.TaskID == "" {
		return ""
	}
	switch m.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	default:
		return ""
	}
	return headerSafe(m.Params.TaskID)
}

// headerSafe returns v as is when it is printable ASCII without surrounding spaces, else
// in the =?base64?...?= form of SEP-2243.
func headerSafe(v string) string {
	safe := v == strings.TrimSpace(v)
	for i := 0; i < len(v) && safe; i++ {
		safe = v[i] >= 0x20 && v[i] < 0x7f
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// SetTaskRoutingName sets the Mcp-Name header of a tasks/* request sent with the SEP-2243
// standard headers (go-sdk sets Mcp-Method for protocol 2026-07-28 and later, and no
// Mcp-Name for methods it does not know).
func SetTaskRoutingName(h http.Header, body []byte) {
	if h.Get("Mcp-Method") == "" || h.Get("Mcp-Name") != "" {
		return
	}
	if name := taskRoutingName(body); name != "" {
		h.Set("Mcp-Name", name)
	}
}
