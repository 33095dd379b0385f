// Package callheaders carries the per-call HTTP headers of bridge.WithCallHeaders from the
// caller's context to the transport's http.RoundTripper, so that the public way to set them is
// the bridge's one and the transport only reads them.
package callheaders

import (
	"context"
	"net/http"
	"strings"
)

// key is the context key of the headers set by With.
type key struct{}

// With returns a copy of ctx whose HTTP requests carry h: headers the MCP transport owns
// (Host, Content-Type, Content-Length, Accept, Last-Event-ID, Transfer-Encoding, Connection
// and every Mcp-* header) are left out, names are canonicalised, and a later With merges,
// its values winning. h is copied.
func With(ctx context.Context, h http.Header) context.Context {
	merged := From(ctx).Clone()
	if merged == nil {
		merged = make(http.Header, len(h))
	}
	for k, vs := range h {
		if owned(k) {
			continue
		}
		merged[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return context.WithValue(ctx, key{}, merged)
}

// From returns the headers With put on ctx, or nil. The caller must not modify them.
func From(ctx context.Context) http.Header {
	h, _ := ctx.Value(key{}).(http.Header)
	return h
}

// owned reports whether the transport sets header k itself, so a per-call value must not
// replace it.
func owned(k string) bool {
	k = http.CanonicalHeaderKey(k)
	switch k {
	case "Host", "Content-Type", "Content-Length", "Accept", "Last-Event-Id", "Transfer-Encoding", "Connection":
		return true
	}
	return strings.HasPrefix(k, "Mcp-")
}
