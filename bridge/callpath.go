package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// The call path: how a tools/call reaches the server. The direct path
// (transport.Conn.CallTool) writes the request on the session's connection itself (stdio,
// in-process, legacy SSE) or POSTs it (Streamable HTTP on 2026-07-28, which is stateless)
// and decodes the result without go-sdk's per-call costs; it carries the protocol's
// per-request envelope and takes the same result, errors and multi-round-trip handling
// as go-sdk's ClientSession.CallTool, which remains the path for the rest (Streamable
// HTTP sessions before 2026-07-28). The bridge installs no sending middleware that a
// tools/call would have to pass (Server.sendingMiddleware only watches server/discover and
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

// pathCounts counts a server's tools/call by the path they took, so tests can tell.
type pathCounts struct {
	direct, sdk atomic.Int64
	// userDirect counts the users' calls sent on a stateless server's shared connection
	// with the user's OAuth handler (users_stateless.go); they count in direct too.
	userDirect atomic.Int64
}

// choose returns whether sess carries direct calls, and its protocol version.
func (p *callPath) choose(sess *session) (bool, string) {
	p.once.Do(func() {
		if ir := sess.cs.InitializeResult(); ir != nil {
			p.protocol = ir.ProtocolVersion
		}
		p.direct = sess.conn.Direct().DirectCalls(p.protocol)
		if p.direct && p.protocol >= wire.ModernProtocol {
			var drop []string
			if !sess.taskCaps.Extension {
				drop = append(drop, tasks.Extension)
			}
			p.envApp, _ = sess.conn.Direct().CallEnvelope(p.protocol, drop...) // nil on error: the session's
			p.envPlain, _ = sess.conn.Direct().CallEnvelope(p.protocol, append(drop, apps.ExtensionID)...)
		}
	})
	return p.direct, p.protocol
}

// callOn makes one tools/call with params on sess. A result that asks for input (protocol
// 2026-07-28) continues in go-sdk's multi-round-trip loop, which answers the requests
// through the client's handlers (OnElicitation) and retries with the responses. tap, when
// not nil, follows the call on either path (a call that may become a task, tasks.go);
// shared: the caller only reads the result's text (wire.CallOptions.SharedMeta).
func (s *Server) callOn(ctx context.Context, sess *session, rt *remoteTool, params *mcp.CallToolParams, tap *wire.Tap, shared bool) (*mcp.CallToolResult, error) {
	direct, protocol := sess.path.choose(sess)
	if !direct {
		if sess.userOAuth != nil {
			return nil, errUserView
		}
		s.paths.sdk.Add(1)
		if tap != nil {
			ctx = wire.WithTap(ctx, tap)
		}
		return sess.cs.CallTool(ctx, params)
	}
	s.paths.direct.Add(1)
	opts := wire.CallOptions{Protocol: protocol, InputSchema: rt.schema, Tap: tap, SharedMeta: shared, Envelope: sess.path.envPlain}
	if rt.ui.ResourceURI != "" {
		opts.Envelope = sess.path.envApp
	}
	if sess.userOAuth != nil {
		opts.OAuth = sess.userOAuth // a user's call on a stateless server (users_stateless.go)
		s.paths.userDirect.Add(1)
	}
	if progressFunc(ctx) != nil {
		opts.OnProgress = func(p *mcp.ProgressNotificationParams) {
			s.progress.deliver(ctx, &mcp.ProgressNotificationClientRequest{Params: p})
		}
	}
	res, err := sess.conn.Direct().CallTool(ctx, params, &opts)
	if err != nil {
		return s.continueCall(ctx, sess, params, tap, err)
	}
	return res, nil
}

// continueCall finishes a direct call that ended in err: a result asking for input goes on
// through go-sdk's loop; any other err is returned. (Apart from callOn so that errors.As's
// target does not move to the heap on every call.)
func (s *Server) continueCall(ctx context.Context, sess *session, params *mcp.CallToolParams, tap *wire.Tap, err error) (*mcp.CallToolResult, error) {
	var ir *wire.InputRequiredError
	if errors.As(err, &ir) {
		if sess.userOAuth != nil {
			return s.continueUserCall(ctx, ir, params)
		}
		cctx := ir.Continue(ctx)
		if tap != nil {
			cctx = wire.WithTap(cctx, tap)
		}
		return sess.cs.CallTool(cctx, params)
	}
	return nil, err
}
