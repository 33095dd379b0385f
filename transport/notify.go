package transport

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/internal/wire"
)

// Notifications go-sdk's client does not know. go-sdk's client decodes only the
// notifications of its own method table and refuses others before any middleware sees
// them, so one the host needs (a task's status) is taken off the connection here: on stdio
// and in-process/legacy SSE connections the reader hands it to the host's func and does not
// pass it on. On Streamable HTTP, where the connection is go-sdk's own (unwrapped), the
// RoundTripper's tee of event streams hands it over as well, and go-sdk still reads it (and
// drops it, as it does today).

// notices is a connection's hand-off of unknown notifications (nil: none).
type notices struct{ p atomic.Pointer[noticeSink] }

type noticeSink struct {
	methods []string
	quoted  [][]byte // each method as a JSON string, for observe's scan
	fn      func(method string, params json.RawMessage)
}

// OnNotifications makes the connection hand fn each notification of one of methods the
// server sends, instead of passing it to go-sdk (which does not know them). fn runs on the
// connection's reader: it must not block, and params are valid only during the call. Call
// it before Transport().Connect. On Streamable HTTP it sees the notifications of event
// streams (a POST's, the standalone GET stream), not of application/json bodies.
func (c *Conn) OnNotifications(methods []string, fn func(method string, params json.RawMessage)) {
	sink := &noticeSink{methods: slices.Clone(methods), fn: fn}
	for _, m := range methods {
		sink.quoted = append(sink.quoted, []byte(`"`+m+`"`))
	}
	c.cap.notes.p.Store(sink)
}

// take hands the notifications it follows among msgs to the host and returns the others
// (msgs, filtered in place).
func (n *notices) take(msgs []jsonrpc.Message) []jsonrpc.Message {
	sink := n.p.Load()
	if sink == nil {
		return msgs
	}
	out := msgs[:0]
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && !r.ID.IsValid() && slices.Contains(sink.methods, r.Method) {
			sink.fn(r.Method, r.Params)
			continue
		}
		out = append(out, m)
	}
	clear(msgs[len(out):])
	return out
}

// observe hands the notifications it follows in an incoming JSON-RPC payload (an SSE
// event's data) to the host; the payload still goes to go-sdk.
func (n *notices) observe(data []byte) {
	sink := n.p.Load()
	if sink == nil || !slices.ContainsFunc(sink.quoted, func(q []byte) bool { return bytes.Contains(data, q) }) {
		return // only a payload naming a method followed is decoded
	}
	if msgs, err := wire.DecodeLine(data, nil); err == nil {
		n.take(msgs)
	}
}
