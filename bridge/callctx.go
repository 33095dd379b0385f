package bridge

import (
	"context"
	"net/http"

	"github.com/ttalk/mcpbridge/internal/callheaders"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
)

// WithCallHeaders returns a copy of ctx under which the requests of a call (a Handler,
// Server.CallTool, ReadResource, Set.Proxy) to an http or sse server carry h, for example a
// user's own token in a multi-tenant host:
//
//	text, err := tool.Handler(bridge.WithCallHeaders(ctx, http.Header{"Authorization": {"Bearer " + userToken}}), args)
//
// The headers are added after ServerConfig.Headers (a per-call value wins), only on
// requests to the server's own host and port, and are treated like configured headers:
// never logged, and redacted ("***") from errors that quote them. Headers the MCP transport
// owns (Host, Content-Type, Accept, Mcp-Session-Id and every other Mcp-* header) are never
// replaced. stdio servers ignore them. A later WithCallHeaders merges, its values winning.
//
// A request that redials a dead session runs under the server's own context, so the
// headers of the call that found the session dead are not used for the new initialize.
func WithCallHeaders(ctx context.Context, h http.Header) context.Context {
	return callheaders.With(ctx, h)
}

// WithCallMeta returns a copy of ctx under which the requests of a call (tools/call, and the
// requests of tools exposing resources and prompts) carry meta in params._meta, for servers
// that read per-request context (a tenant, a request ID) there. Keys the bridge sets itself
// win: progressToken (WithProgress) and, when tracing, traceparent, tracestate and baggage.
// A later WithCallMeta merges, its values winning. Values must marshal to JSON.
func WithCallMeta(ctx context.Context, meta map[string]any) context.Context {
	return itel.WithMeta(ctx, meta) // internal/telemetry: Telemetry.RequestMeta adds the trace context
}
