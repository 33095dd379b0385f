package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client is the direct client of one connection: tools/call sent beside go-sdk's session
// (see the package doc). A stdio, in-process or legacy SSE connection hands it its call
// table and writer once connected (Attach); a Streamable HTTP connection gives it its
// HTTP client at creation (NewClient) and says when go-sdk's connection is up (Connected).
// Every connection feeds it the _meta of go-sdk's server/discover request (Envelope).
// All methods are safe for concurrent use.
type Client struct {
	http *HTTP // Streamable HTTP: every call is its own POST; nil otherwise

	mu        sync.Mutex
	calls     *Calls    // the connection's direct calls; nil until Attach
	write     WriteFunc // the connection's writer
	connected bool      // Streamable HTTP: go-sdk's connection is up

	env        Envelope       // the per-request _meta of protocol 2026-07-28 (Envelope.go)
	session    HTTPSession    // Streamable HTTP before 2026-07-28: go-sdk's session (stateful.go)
	httpIDs    atomic.Int64   // JSON-RPC IDs of direct Streamable HTTP calls (counting down)
	bindings   schemaBindings // x-mcp-header markers by tool (paramheaders.go)
	meta       metaCache      // the last result _meta decoded (direct.go)
	sharedMeta metaCache      // the same, for callers that only read it (CallOptions.SharedMeta)
}

// HTTP is what a direct call over Streamable HTTP needs of its connection.
type HTTP struct {
	// Client sends the POST: the connection's own, whose RoundTripper adds the configured
	// and per-call headers, restores the real endpoint, bounds the body, marks the server
	// reached and redacts errors (it passes a DirectBody's response through unwatched).
	Client *http.Client
	// Endpoint is the URL to POST to, as the connection gives it to go-sdk.
	Endpoint string
	// OAuth is the connection's OAuth handler, or nil (CallOptions.OAuth overrides it).
	OAuth auth.OAuthHandler
	// Budget is the connection's per-message limit.
	Budget Budget
}

// Budget is a connection's per-message limit as a direct call needs it.
type Budget interface {
	// Limit is the limit in bytes; <= 0: none.
	Limit() int64
	// Overrun records that an inbound message (what names it: "SSE event") broke the
	// limit, and returns the connection's first overrun error.
	Overrun(what string) error
}

// NewClient returns the direct client of a connection: over Streamable HTTP when h is not
// nil, otherwise over a connection that hands it its call table with Attach.
func NewClient(h *HTTP) *Client {
	c := &Client{http: h}
	c.sharedMeta.shared = true
	return c
}

// Attach gives a stdio, in-process or legacy SSE client the connection's call table and
// writer, once the connection is up.
func (c *Client) Attach(calls *Calls, write WriteFunc) {
	c.mu.Lock()
	c.calls, c.write = calls, write
	c.mu.Unlock()
}

// Connected says that a Streamable HTTP client's go-sdk connection is up.
func (c *Client) Connected() {
	c.mu.Lock()
	c.connected = true
	c.mu.Unlock()
}

// Envelope returns the connection's per-request Envelope, for its writers to record
// go-sdk's server/discover in (Envelope.Observe).
func (c *Client) Envelope() *Envelope { return &c.env }

// CallEnvelope returns the per-request _meta for protocol version v (what a direct call
// sends) with the named extensions left out of its client capabilities: a client need not
// declare, on a request, an extension that cannot matter to it (the tasks extension to a
// server that offers no tasks, MCP Apps on a call of a tool without a UI), and the server
// decodes less. With no names it is the session's Envelope as go-sdk sends it.
func (c *Client) CallEnvelope(v string, drop ...string) (json.RawMessage, error) {
	full, err := c.env.bytesFor(v)
	if err != nil || len(drop) == 0 {
		return full, err
	}
	return withoutExtensions(full, drop)
}

// DirectCalls reports whether CallTool can be used for a session that negotiated protocol
// version protocol: stdio, in-process and legacy SSE connections carry direct calls on any
// version (from ModernProtocol on once go-sdk's server/discover was seen, whose _meta every
// direct call carries); Streamable HTTP carries them from ModernProtocol on, where every
// request is its own POST, and before it on a session whose initialize declared no roots,
// sampling or elicitation (stateful.go).
func (c *Client) DirectCalls(protocol string) bool {
	c.mu.Lock()
	direct, inner := c.calls != nil, c.connected
	c.mu.Unlock()
	return c.directCalls(direct, inner, protocol)
}

// directCalls is DirectCalls for a connection whose direct table and inner connection are
// (or are not) there.
func (c *Client) directCalls(direct, inner bool, protocol string) bool {
	modern := protocol >= ModernProtocol
	switch {
	case c.http != nil:
		return inner && (modern && c.env.ready() || !modern && c.session.direct())
	case !direct:
		return false
	}
	return !modern || c.env.ready()
}

// CallTool sends tools/call with p without going through go-sdk's session, and returns
// the result as go-sdk's ClientSession.CallTool would: the same errors (a JSON-RPC error
// wrapped as `calling "tools/call": …`, ctx.Err() on cancellation, after which
// notifications/cancelled is sent on stdio and in-process connections;
// mcp.ErrConnectionClosed when the connection ended before the request was written) and
// the same result value. p.Arguments that is a json.RawMessage is sent as is (after a
// validity check), not re-encoded; p is not modified.
//
// From protocol 2026-07-28 on (opts.Protocol) the request carries the Envelope go-sdk
// puts on its own requests, p.Meta's entries winning as with go-sdk; Streamable HTTP
// sends it as one POST with the protocol-version, Mcp-Method, Mcp-Name and Mcp-Param-*
// headers, through the connection's HTTP client (configured and per-call headers, OAuth,
// byte budget, redaction). A result whose resultType is neither "complete" (or absent)
// nor "input_required" is an error, as the protocol requires. A result with input
// requests comes back as an *InputRequiredError, to be finished by go-sdk's
// multi-round-trip loop (see InputRequiredError.Continue).
//
// It bypasses go-sdk's sending middleware. It returns ErrNoDirectCall when
// DirectCalls(opts.Protocol) is false.
func (c *Client) CallTool(ctx context.Context, p *mcp.CallToolParams, opts *CallOptions) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	d, write, inner := c.calls, c.write, c.connected
	c.mu.Unlock()
	if !c.directCalls(d != nil, inner, optsProtocol(opts)) {
		return nil, ErrNoDirectCall
	}
	modern := opts.modern()
	params, err := c.encodeParams(p, opts)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
	}
	tap := opts.tap()
	if tap != nil && tap.Param != "" {
		if params, err = setMember(params, tap.Param, tap.Value); err != nil {
			return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
		}
	}
	var raw json.RawMessage
	if c.http != nil {
		raw, err = c.httpCall(ctx, params, p, opts)
	} else {
		raw, err = d.call(ctx, write, "tools/call", params)
	}
	if err != nil {
		return nil, err
	}
	if tap != nil {
		tap.offer(raw)
		if tap.Result() != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
		}
	}
	mc := &c.meta
	if opts != nil && opts.SharedMeta {
		mc = &c.sharedMeta
	}
	res, err := decodeCallResult(raw, modern, mc)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	if res.InputRequests != nil { // go-sdk's test for a multi-round-trip result
		return nil, &InputRequiredError{Result: res, raw: raw, env: c.pingParams(opts)}
	}
	return res, nil
}

// encodeParams encodes p for the wire, adding the per-request Envelope on modern protocols.
func (c *Client) encodeParams(p *mcp.CallToolParams, opts *CallOptions) (json.RawMessage, error) {
	if !opts.modern() {
		return encodeCallToolParams(p, nil)
	}
	if p == nil {
		p = &mcp.CallToolParams{}
	}
	if p.Meta == nil {
		if opts.Envelope != nil {
			return encodeCallToolParams(p, opts.Envelope)
		}
		env, err := c.env.bytesFor(opts.Protocol)
		if err != nil {
			return nil, err
		}
		return encodeCallToolParams(p, env)
	}
	merged, err := c.env.merged(opts.Protocol, p.Meta)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Meta = merged
	return encodeCallToolParams(&q, nil)
}

// pingParams are the params of the ping that stands in for go-sdk's first request when a
// call continues through its multi-round-trip loop: the Envelope on modern protocols.
func (c *Client) pingParams(opts *CallOptions) json.RawMessage {
	if !opts.modern() {
		return nil
	}
	env, err := c.env.bytesFor(opts.Protocol)
	if err != nil {
		return nil
	}
	return append(append([]byte(`{"_meta":`), env...), '}')
}
