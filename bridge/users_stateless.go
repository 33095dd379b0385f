package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// Users of a stateless server: a Streamable HTTP server on protocol 2026-07-28 keeps no
// session, and the bridge calls its tools with one POST each (the direct path, callpath.go).
// A user's tools/call there goes on the shared connection with the user's OAuth handler
// (wire.CallOptions.OAuth): no session, connection or client per user, only the
// handler, which the userTable bounds like the sessions of stateful servers. The few
// requests that need go-sdk's session (a call that becomes an MCP task or asks for input,
// resources/read, prompts) get the user's own session, opened on first need; a listing of
// the user's tools gets one for the listing only (Server.listOnce).

// toolsCallKey marks the ctx of a tools/call's own request (Server.send; not the task
// polls or retries that follow it) on a per-user server with the tool called; sessionFor
// then lets it go direct with the user's handler.
type toolsCallKey struct{}

// errUserView is returned if a user's call on a shared stateless session were to leave the
// direct path (it cannot: userView checks the path); it never sends another user's token.
var errUserView = errors.New("internal error: a user's call on the shared session must go direct")

// markToolsCall marks ctx as the tools/call of rt, on per-user servers only.
func (s *Server) markToolsCall(ctx context.Context, rt *remoteTool) context.Context {
	if !s.perUser() || s.opts.Users == nil {
		return ctx
	}
	return context.WithValue(ctx, toolsCallKey{}, rt)
}

// stateless reports whether sess is a session of a stateless server: Streamable HTTP on
// protocol 2026-07-28 or later, its calls on the direct path.
func (s *Server) stateless(sess *session) bool {
	direct, protocol := sess.path.choose(sess)
	if !direct || protocol < wire.ModernProtocol {
		return false
	}
	s.catMu.Lock()
	tr := s.status.Transport
	s.catMu.Unlock()
	return tr == string(transport.KindHTTP)
}

// userView returns, for a tools/call of rt by user id on a stateless server, a view of the
// shared session that calls with the user's OAuth handler; ok is false when the call must
// go on the user's own session (a stateful server, or a call that may become a task). A
// user without a grant gets a *NeedsLoginError at once, without contacting the server.
func (s *Server) userView(ctx context.Context, id string, rt *remoteTool) (view *session, release func(), ok bool, err error) {
	if s.users.noShared.Load() {
		return nil, nil, false, nil
	}
	shared, err := s.session(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	if !s.stateless(shared) {
		return nil, nil, false, nil
	}
	if tap, err := taskTap(s.tasks, shared.taskCaps, rt, false); tap != nil || err != nil {
		return nil, nil, false, nil
	}
	s.users.mu.Lock()
	if s.life.Err() != nil {
		s.users.mu.Unlock()
		return nil, nil, false, ErrServerClosed
	}
	u := s.user(id)
	u.busy++ // the handler is not evicted while the call runs
	s.users.mu.Unlock()
	release = func() { s.release(u) }
	has, err := u.h.Ensure(ctx)
	if err != nil {
		release()
		return nil, nil, false, fmt.Errorf("user %q: %w", id, err)
	}
	if !has {
		release()
		return nil, nil, false, &NeedsLoginError{Server: s.cfg.ID, User: id, Reason: "no grant is stored for the user", s: s}
	}
	// taskCaps stays zero: a view never taps a call as a task (checked above on shared's).
	view = &session{cs: shared.cs, conn: shared.conn, cancel: func() {}, dead: shared.dead, started: shared.started, shared: shared, userOAuth: u.h}
	view.path.once.Do(func() { view.path.direct, view.path.protocol = shared.path.choose(shared) })
	return view, release, true, nil
}

// continueUserCall finishes on the user's own session a direct call of the user's (on a
// stateless server) whose result asks for input: go-sdk's multi-round-trip loop answers
// the requests and retries, with the user's token.
func (s *Server) continueUserCall(ctx context.Context, ir *wire.InputRequiredError, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	user, _ := UserFromContext(ctx)
	sess, release, err := s.userSession(ctx, user)
	if err != nil {
		return nil, err
	}
	defer release()
	return sess.cs.CallTool(ir.Continue(ctx), params)
}
