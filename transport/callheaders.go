package transport

import (
	"context"
	"net/http"
	"strings"
)

// callHeadersKey is the context key of the headers set by WithHeaders.
type callHeadersKey struct{}

// WithHeaders returns a copy of ctx that makes the HTTP requests of one call carry h: a
// request whose context is (derived from) the result gets h added on its way out, after
// Spec.Headers, so a per-call value wins over a configured one (a user's token in a
// multi-tenant host). Like Spec.Headers, h goes only to the endpoint's own host and port,
// and its values are treated as secrets: an error that quotes one has it replaced by "***".
//
// Headers the MCP transport itself owns are never taken from h: Host, Content-Type,
// Content-Length, Accept, Last-Event-ID and every Mcp-* header (session, protocol version,
// SEP-2243 method and parameter headers). Calling WithHeaders again merges, later values
// winning. h is copied; stdio servers ignore it.
func WithHeaders(ctx context.Context, h http.Header) context.Context {
	merged := headersFrom(ctx).Clone()
	if merged == nil {
		merged = make(http.Header, len(h))
	}
	for k, vs := range h {
		if ownedHeader(k) {
			continue
		}
		merged[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return context.WithValue(ctx, callHeadersKey{}, merged)
}

// headersFrom returns the headers WithHeaders put on ctx, or nil.
func headersFrom(ctx context.Context) http.Header {
	h, _ := ctx.Value(callHeadersKey{}).(http.Header)
	return h
}

// ownedHeader reports whether the transport sets header k itself, so a per-call value must
// not replace it.
func ownedHeader(k string) bool {
	k = http.CanonicalHeaderKey(k)
	switch k {
	case "Host", "Content-Type", "Content-Length", "Accept", "Last-Event-Id", "Transfer-Encoding", "Connection":
		return true
	}
	return strings.HasPrefix(k, "Mcp-")
}
