package bridge

import (
	"context"

	"github.com/ttalk/mcpbridge/internal/session"
)

// Progress is one progress notification from a server about a running tool call (its
// fields: internal/session, where the routes of calls in flight live).
type Progress = session.Progress

// WithProgress returns a context under which tool calls (Handler, Server.CallTool and
// proxied tools/call) ask the server for progress notifications and pass each one to fn,
// with the context of the call it belongs to (which may have ended by then). A call that
// runs as an MCP task also passes each change of the task's status (see Progress.TaskID),
// and its progress notifications for the task's whole life; the task's statuses have
// reached fn when the call returns (unless fn is slow).
// fn runs on a goroutine of the server's own, one notification at a time and in order; it
// may block briefly or close the server. The queue behind a slow fn is the server's, shared
// by all its calls in flight: at most 64 notifications wait in it, the oldest dropped
// first (logged), so one slow fn delays the progress of every call to that server. go-sdk handles
// notifications apart from responses, so some may reach fn shortly after the call returned;
// those arriving more than session.ProgressLinger (2s) after it are dropped.
func WithProgress(ctx context.Context, fn func(context.Context, Progress)) context.Context {
	return session.WithProgress(ctx, fn)
}
