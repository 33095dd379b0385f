package transport

import (
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Notifications go-sdk's client does not know. go-sdk's client decodes only the
// notifications of its own method table and refuses others before any middleware sees
// them, so one the host needs (a task's status) is taken off the connection here: on stdio
// and in-process/legacy SSE connections the reader hands it to the host's func and does not
// pass it on. (Streamable HTTP connections are go-sdk's own, unwrapped: they hand over
// nothing.)

// notices is a connection's hand-off of unknown notifications (nil: none).
type notices struct{ p atomic.Pointer[noticeSink] }

type noticeSink struct {
	methods []string
	fn      func(method string, params json.RawMessage)
}

// OnNotifications makes the connection hand fn each notification of one of methods the
// server sends, instead of passing it to go-sdk (which does not know them). fn runs on the
// connection's reader: it must not block, and params are valid only during the call. Call
// it before Transport().Connect; it has no effect on Streamable HTTP connections.
func (c *Conn) OnNotifications(methods []string, fn func(method string, params json.RawMessage)) {
	c.cap.notes.p.Store(&noticeSink{methods: slices.Clone(methods), fn: fn})
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
