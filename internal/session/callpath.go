package session

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/internal/wire"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/transport"
)

// The call path: how a tools/call reaches the server. The direct path
// (transport.Conn.CallTool) writes the request on the session's connection itself (stdio,
// in-process, legacy SSE) or POSTs it (Streamable HTTP on 2026-07-28, which is stateless)
// and decodes the result without go-sdk's per-call costs; it carries the protocol's
// per-request envelope and takes the same result, errors and multi-round-trip handling
// as go-sdk's ClientSession.CallTool, which remains the path for the rest (Streamable
// HTTP sessions before 2026-07-28). The pool installs no sending middleware that a
// tools/call would have to pass (Pool.SendingMiddleware only watches server/discover and
// subscriptions/listen).

// callPath is a session's choice of path, made on its first call.
type callPath struct {
	once     sync.Once
	direct   bool
	protocol string
	// The per-request _meta of a direct call on 2026-07-28 (transport.Conn.CallEnvelope):
	// the tasks extension is declared only to a server that offers it, the MCP Apps one
	// only on calls of an App tool (envApp); nil: the session's envelope.
	envApp, envPlain json.RawMessage
}

// PathCounts counts a server's tools/call by the path they took, so tests can tell.
type PathCounts struct {
	Direct, SDK atomic.Int64
	// UserDirect counts the users' calls sent on a stateless server's shared connection
	// with the user's OAuth handler (users.go); they count in Direct too.
	UserDirect atomic.Int64
}

// Paths returns the pool's counts of tools/call by path.
func (p *Pool) Paths() *PathCounts { return &p.paths }

// choose returns whether sess carries direct calls, and its protocol version.
func (c *callPath) choose(sess *Session) (bool, string) {
	c.once.Do(func() {
		if ir := sess.CS.InitializeResult(); ir != nil {
			c.protocol = ir.ProtocolVersion
		}
		c.direct = sess.Conn.Direct().DirectCalls(c.protocol)
		if c.direct && c.protocol >= wire.ModernProtocol {
			var drop []string
			if !sess.Caps.Extension {
				drop = append(drop, tasks.Extension) // declared only to a server that offers it
			}
			c.envApp, _ = sess.Conn.Direct().CallEnvelope(c.protocol, drop...) // nil on error: the session's
			c.envPlain, _ = sess.Conn.Direct().CallEnvelope(c.protocol, append(drop, apps.ExtensionID)...)
		}
	})
	return c.direct, c.protocol
}

// CallOptions are the settings of one Session.CallTool.
type CallOptions struct {
	InputSchema json.RawMessage // the tool's inputSchema as listed (Mcp-Param headers)
	App         bool            // the tool is an MCP App's: its envelope declares the extension
	// Tap, when not nil, follows the call on either path (a call that may become a task).
	Tap *wire.Tap
	// SharedMeta: the caller only reads the result's text (wire.CallOptions.SharedMeta).
	SharedMeta bool
	// OnProgress, when set, receives the progress a direct call's response stream carries.
	OnProgress func(*mcp.ProgressNotificationParams)
}

// errUserView is returned if a user's call on a shared stateless session were to leave the
// direct path (it cannot: userView checks the path); it never sends another user's token.
var errUserView = errors.New("internal error: a user's call on the shared session must go direct")

// CallTool makes one tools/call with params on sess, on the direct path or through go-sdk.
// A result that asks for input (protocol 2026-07-28) continues in go-sdk's multi-round-trip
// loop, which answers the requests through the client's handlers (elicitation) and retries
// with the responses.
func (sess *Session) CallTool(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (*mcp.CallToolResult, error) {
	paths := &sess.pool.paths
	direct, protocol := sess.path.choose(sess)
	if !direct {
		if sess.userOAuth != nil {
			return nil, errUserView
		}
		paths.SDK.Add(1)
		if opts.Tap != nil {
			ctx = wire.WithTap(ctx, opts.Tap)
		}
		return sess.CS.CallTool(ctx, params)
	}
	paths.Direct.Add(1)
	o := wire.CallOptions{Protocol: protocol, InputSchema: opts.InputSchema, Tap: opts.Tap, SharedMeta: opts.SharedMeta, Envelope: sess.path.envPlain, OnProgress: opts.OnProgress}
	if opts.App {
		o.Envelope = sess.path.envApp
	}
	if sess.userOAuth != nil {
		o.OAuth = sess.userOAuth // a user's call on a stateless server (users.go)
		paths.UserDirect.Add(1)
	}
	res, err := sess.Conn.Direct().CallTool(ctx, params, &o)
	if err != nil {
		return sess.continueCall(ctx, params, opts.Tap, err)
	}
	return res, nil
}

// CallTapped is CallTool for a call a tap follows on either path: task is the tasks
// client's tap of a call that may become a task (nil when it cannot), and structured, when
// not nil, the caller's storage for a tap that keeps only the result's raw
// structuredContent when no task tap follows the call. It returns the result, the task
// handle the server sent instead of one (nil: none; go-sdk decoded it as an empty result,
// or failed to) and, with structured, the raw structuredContent.
func (sess *Session) CallTapped(ctx context.Context, params *mcp.CallToolParams, opts CallOptions, task, structured *wire.Tap) (res *mcp.CallToolResult, handle json.RawMessage, sc []byte, err error) {
	tap := task
	if structured != nil {
		if tap == nil {
			tap = structured
			*tap = wire.Tap{Method: "tools/call", Keep: keepNone}
		}
		tap.Structured = true
	}
	opts.Tap = tap
	res, err = sess.CallTool(ctx, params, opts) // direct or through go-sdk
	if tap == nil {
		return res, nil, nil, err
	}
	tap.Done()
	if structured != nil {
		sc = tap.StructuredContent()
	}
	return res, tap.Result(), sc, err
}

// keepNone is the Keep of a tap that follows a call only for its structured content.
func keepNone(json.RawMessage) bool { return false }

// continueCall finishes a direct call that ended in err: a result asking for input goes on
// through go-sdk's loop; any other err is returned. (Apart from CallTool so that errors.As's
// target does not move to the heap on every call.)
func (sess *Session) continueCall(ctx context.Context, params *mcp.CallToolParams, tap *wire.Tap, err error) (*mcp.CallToolResult, error) {
	var ir *wire.InputRequiredError
	if errors.As(err, &ir) {
		if sess.userOAuth != nil {
			return sess.pool.continueUserCall(ctx, sess.user, ir, params)
		}
		cctx := ir.Continue(ctx)
		if tap != nil {
			cctx = wire.WithTap(cctx, tap)
		}
		return sess.CS.CallTool(cctx, params)
	}
	return nil, err
}

// Stateless reports whether sess is a session of a stateless server: Streamable HTTP on
// protocol 2026-07-28 or later, its calls on the direct path.
func (sess *Session) Stateless() bool {
	direct, protocol := sess.path.choose(sess)
	return direct && protocol >= wire.ModernProtocol && sess.Kind == transport.KindHTTP
}
