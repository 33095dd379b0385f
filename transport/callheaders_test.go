package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/callheaders"
	"github.com/ttalk/mcpbridge/transport"
)

func TestPerCallHeadersReachOnlyThatCall(t *testing.T) {
	for _, kind := range []transport.Kind{transport.KindHTTP, transport.KindSSE} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := testCtx(t)
			hs := newHTTPServer(t, kind, false)
			spec := transport.Spec{ID: "percall", URL: hs.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer shared", "X-Api-Key": "k"}}
			c, err := transport.Open(spec, kind)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, ctx, c)
			listAll(t, ctx, cs)
			before := len(hs.requests())
			callCtx := callheaders.With(ctx, http.Header{
				"Authorization":  {"Bearer user-1"},
				"x-tenant":       {"t1"},
				"Mcp-Session-Id": {"forged"}, // owned by the transport: ignored
				"Content-Type":   {"text/plain"},
			})
			callCtx = callheaders.With(callCtx, http.Header{"X-Tenant": {"t2"}}) // later wins
			if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("call with per-call headers: %v", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("call without: %v", err)
			}
			var posts []*http.Request
			for _, r := range hs.requests()[before:] {
				if r.Method == http.MethodPost {
					posts = append(posts, r)
				}
			}
			if len(posts) != 2 {
				t.Fatalf("server saw %d POSTs for two calls", len(posts))
			}
			with, without := posts[0], posts[1]
			if got := with.Header.Get("Authorization"); got != "Bearer user-1" {
				t.Errorf("per-call Authorization = %q, want the call's own", got)
			}
			if got := with.Header.Get("X-Tenant"); got != "t2" {
				t.Errorf("X-Tenant = %q, want t2", got)
			}
			if got := with.Header.Get("X-Api-Key"); got != "k" {
				t.Errorf("configured header lost: X-Api-Key = %q", got)
			}
			if got := with.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q: a per-call header replaced the transport's", got)
			}
			if got := with.Header.Get("Mcp-Session-Id"); got == "forged" {
				t.Error("a per-call header replaced Mcp-Session-Id")
			}
			if got := without.Header.Get("Authorization"); got != "Bearer shared" {
				t.Errorf("the next call's Authorization = %q, want the configured one", got)
			}
			if got := without.Header.Get("X-Tenant"); got != "" {
				t.Errorf("the next call kept X-Tenant = %q", got)
			}
		})
	}
}

func TestPerCallHeadersRedactedAndKeptOnHost(t *testing.T) {
	// Errors that quote a per-call value have it redacted.
	spec := transport.Spec{ID: "sec", URL: "http://" + deadURL(t) + "/mcp", HTTPClient: &http.Client{Transport: leakyRoundTripper{}}}
	c, err := transport.Open(spec, transport.KindHTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := callheaders.With(testCtx(t), http.Header{"Authorization": {"Bearer PERCALLSECRET"}})
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		cs.Close()
		t.Fatal("connect through a failing RoundTripper succeeded")
	}
	if strings.Contains(err.Error(), "PERCALLSECRET") {
		t.Errorf("error contains the per-call header value: %v", err)
	}
	if !strings.Contains(err.Error(), "***") {
		t.Errorf("error does not show the redaction: %v", err)
	}
}
