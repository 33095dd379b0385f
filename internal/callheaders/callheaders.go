// Package callheaders carries the per-call HTTP headers of bridge.WithCallHeaders from the
// caller's context to the transport's http.RoundTripper, so that the public way to set them is
// the bridge's one and the transport only reads them.
package callheaders

import (
	"context"
	"net/http"
	"strings"

	"github.com/ttalk/mcpbridge/internal/redact"
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

// Secrets returns the strings of the per-call headers on ctx to mask in free text (a
// server's error messages): by the rule of redact.InFreeText, every value of a
// credential-named header (Authorization, X-Api-Key, ...) and other values from
// redact.MinEnvSecretLen bytes, each with its credentials (redact.HeaderSecrets). The
// transport's own errors mask every per-call value. nil when ctx carries none.
func Secrets(ctx context.Context) []string {
	var s []string
	for k, vs := range From(ctx) {
		for _, v := range vs {
			if redact.InFreeText(k, v) {
				s = append(s, redact.HeaderSecrets(v)...)
			}
		}
	}
	return s
}
