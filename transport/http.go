package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/callheaders"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// roundTripper is the http.RoundTripper under go-sdk's HTTP transports. It
// restores the real endpoint URL, injects headers and basic auth, records
// whether the server was reached and whether it looks like a legacy SSE
// server, and (Streamable HTTP only) captures tools/list responses.
type roundTripper struct {
	base     http.RoundTripper
	ep       *endpoint
	headers  http.Header
	host     string // the canonical Host header value from Spec.Headers, if any
	capture  *capture
	captures bool // tee bodies for the capture (Streamable HTTP only)
	detect   bool // detect the legacy SSE fallback signal (Streamable HTTP only)
	budget   *budget
	env      *wire.Envelope    // records go-sdk's server/discover _meta (Streamable HTTP only)
	session  *wire.HTTPSession // records go-sdk's session ID and initialize (Streamable HTTP only)

	// secrets are the strings no error may show: the endpoint's userinfo, query values and
	// bare query keys, and the header values (with their credentials).
	secrets []string
	// onCredential is Spec.OnCredential; lastCred the credentials it was last called with.
	onCredential func(string)
	lastCred     atomic.Pointer[string]

	reached  atomic.Bool
	fallback atomic.Bool

	// own is the transport this connection created for itself (no Spec.HTTPClient
	// transport given); Close releases its idle connections.
	own *http.Transport
	// closing is set when the connection's Close begins. A direct call's POST is no longer
	// sent then (mcp.ErrConnectionClosed, as on a closed stdio connection); any other
	// request (go-sdk's DELETE, its notifications/cancelled for what Close cancelled)
	// closes its HTTP connection after the response, and every request that returns after
	// it releases own's idle connections again: Close's own release only empties the pool
	// as it is then, and a request after it would keep whatever goes idle later (idle
	// keep-alive connections, each with its goroutines, until IdleConnTimeout).
	closing atomic.Bool
}

// maxIdlePerHost keeps enough idle connections for concurrent tool calls to one server:
// http.DefaultTransport keeps 2, so 32 concurrent callers would keep dialling.
const maxIdlePerHost = 64

// newRoundTripper builds the RoundTripper for s.
func newRoundTripper(s Spec, k Kind, ep *endpoint, cp *capture) *roundTripper {
	var own *http.Transport
	base := http.DefaultTransport
	if s.HTTPClient != nil && s.HTTPClient.Transport != nil {
		base = s.HTTPClient.Transport
	} else if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		own = dt.Clone()
		own.MaxIdleConnsPerHost = maxIdlePerHost
		base = own
	}
	if s.WrapBase != nil && k == KindHTTP {
		base = s.WrapBase(base)
	}
	rt := &roundTripper{
		own:      own,
		base:     base,
		ep:       ep,
		headers:  make(http.Header, len(s.Headers)),
		capture:  cp,
		captures: k == KindHTTP,
		detect:   k == KindHTTP,
		budget:   newBudget(s.MaxFrameBytes),

		onCredential: s.OnCredential,
	}
	withUser := *ep.real
	withUser.User = ep.user
	rt.secrets = redact.URLSecrets(&withUser)
	for k, v := range s.Headers {
		rt.secrets = append(rt.secrets, redact.HeaderSecrets(v)...)
		if strings.EqualFold(k, "Host") {
			rt.host = v
			continue
		}
		rt.headers.Set(k, v)
	}
	return rt
}

// sameURL reports whether a and b have the same scheme, host, path and query.
func sameURL(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host) &&
		a.EscapedPath() == b.EscapedPath() && a.RawQuery == b.RawQuery
}

// hostKey returns u's lowercased host name and port (the scheme's default
// port if none is given).
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// RoundTrip implements http.RoundTripper. It never modifies req.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	_, direct := req.Body.(wire.DirectBody) // a direct call's POST (internal/wire): nothing to inspect
	closing := rt.closing.Load()
	if closing && direct {
		return nil, mcp.ErrConnectionClosed
	}
	out := req.Clone(req.Context())
	out.Close = out.Close || closing
	perCall := callheaders.From(req.Context())
	own := false // the request goes to the endpoint's own host and port
	if sameURL(req.URL, rt.ep.redacted) {
		u := *rt.ep.real
		out.URL = &u
		out.Host = ""
		own = true
	} else {
		own = hostKey(out.URL) == hostKey(rt.ep.real)
	}
	if own {
		if a := req.Header.Get("Authorization"); a != "" && rt.headers.Get("Authorization") == "" && perCall.Get("Authorization") == "" {
			rt.sentCredential(a) // set by go-sdk's OAuth handler
		}
		for k, vs := range rt.headers {
			out.Header[k] = append([]string(nil), vs...)
		}
		for k, vs := range perCall {
			out.Header[k] = append([]string(nil), vs...)
		}
		if rt.host != "" {
			out.Host = rt.host
		}
		if u := rt.ep.user; u != nil && out.Header.Get("Authorization") == "" {
			pw, _ := u.Password()
			out.SetBasicAuth(u.Username(), pw)
		}
	}

	var isInit bool
	var sentToolsList bool
	if !direct && (rt.detect || rt.captures) && req.Method == http.MethodPost && req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, redact.Error(err, rt.secretsWith(perCall))
		}
		if rt.detect {
			if isInit = isInitialize(body); isInit && rt.session != nil {
				rt.session.Initializing(body)
			}
		}
		if rt.captures {
			body, sentToolsList = rt.capture.observeBody(req.Context(), body)
			wire.SetTaskRoutingName(out.Header, body)
		}
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
		if resp := rt.observeCalls(req, body); resp != nil {
			return resp, nil
		}
	}

	resp, err := rt.base.RoundTrip(out)
	if rt.own != nil && rt.closing.Load() {
		// Close began while this request was on its way: its transport may have taken a
		// connection from the pool (or dialled one) after Close released the pool's.
		rt.own.CloseIdleConnections()
	}
	if err != nil {
		return nil, redact.Error(err, rt.secretsWith(perCall))
	}
	rt.reached.Store(true)
	resp.Request = req // never expose the real URL through the response
	if req.Method == http.MethodPost && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		wire.Accepted(req.Context()) // the server took the request (see wire.Delivery)
		if !direct && rt.session != nil {
			rt.session.Answered(resp.Header) // the session ID, as go-sdk takes it
		}
	}

	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	if isInit && legacyRefusal(resp, ct) {
		rt.fallback.Store(true)
	}
	if resp.Body != nil && resp.Body != http.NoBody {
		if direct {
			// The direct call reads the answer itself, with the same event limit.
			if ct != "text/event-stream" && rt.budget.limit > 0 {
				resp.Body = &limitedBody{rc: resp.Body, b: rt.budget, what: "HTTP response body"}
			}
		} else {
			rt.bound(resp, ct, sentToolsList)
		}
	}
	return resp, nil
}

// bound puts the per-message budget on a response body and, for Streamable HTTP, tees it
// to the tools/list capture. An event stream is watched for events over the budget (go-sdk
// enforces the same limit and fails the connection; the watch records which limit it was
// and ends the body there);
// any other body fails once it exceeds the budget, so go-sdk's io.ReadAll of an endless
// body stops there. Then unknown content is made readable for go-sdk (tolerate).
func (rt *roundTripper) bound(resp *http.Response, ct string, sentToolsList bool) {
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ct == "text/event-stream" {
		p := &wire.SSEParser{Limit: maxCaptureBytes}
		if rt.budget.limit > 0 {
			p.Limit = int(rt.budget.limit)
			p.OnOverflow = func() { rt.budget.record("SSE event") }
		}
		if rt.captures && ok {
			// Any stream may carry the response: a POST's own stream, or a
			// GET resuming it with Last-Event-ID.
			p.OnEvent = func(name string, data []byte) {
				if name == "" || name == "message" {
					rt.capture.observeResponses(data)
					rt.capture.notes.observe(data) // notifications go-sdk does not know (notify.go)
				}
			}
		}
		if p.OnEvent != nil || p.OnOverflow != nil {
			tb := &teeBody{rc: resp.Body, sink: p}
			if p.OnOverflow != nil {
				// go-sdk fails the stream at the same event, then drains the body to
				// reuse the connection: stop the drain of an endless event.
				tb.stop = func() error {
					if p.Over() {
						return rt.budget.err()
					}
					return nil
				}
			}
			resp.Body = tb
		}
		rt.tolerate(resp, ct, ok)
		return
	}
	if rt.budget.limit > 0 {
		resp.Body = &limitedBody{rc: resp.Body, b: rt.budget, what: "HTTP response body"}
	}
	if rt.captures && ok && ct == "application/json" && sentToolsList {
		resp.Body = &teeBody{rc: resp.Body, sink: &jsonSink{
			limit:  maxCaptureBytes,
			onBody: rt.capture.observeResponses,
		}}
	}
	rt.tolerate(resp, ct, ok)
}

// tolerate rewrites a successful Streamable HTTP response's content blocks that go-sdk
// cannot decode, after the budget and the capture saw the body as sent (tolerateBody),
// holding at most one message's limit (or wire.MaxCaptureBytes with none).
func (rt *roundTripper) tolerate(resp *http.Response, ct string, ok bool) {
	if !rt.captures || !ok {
		return
	}
	limit := maxCaptureBytes
	if rt.budget.limit > 0 {
		limit = int(rt.budget.limit)
	}
	tolerateBody(resp, ct, limit)
}

// observeCalls records the _meta of go-sdk's server/discover, and answers go-sdk's first
// tools/call of a call that continues a direct one (wire.InputRequiredError.Continue) with the
// saved result, without sending it: the response it returns is that answer.
func (rt *roundTripper) observeCalls(req *http.Request, body []byte) *http.Response {
	discover := rt.env != nil && bytes.Contains(body, []byte(`"`+wire.MethodDiscover+`"`))
	call := bytes.Contains(body, []byte(`"`+methodToolsCall+`"`)) && wire.Resuming(req.Context())
	if !discover && !call {
		return nil
	}
	msgs, err := wire.DecodeLine(body, nil)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		r, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		switch {
		case r.Method == wire.MethodDiscover && discover:
			rt.env.Observe(r.Params)
		case r.Method == methodToolsCall && call && len(msgs) == 1:
			if n, ok := r.ID.Raw().(int64); !ok || n <= 0 {
				continue
			}
			if raw, ok := wire.TakeResume(req.Context()); ok {
				return savedResponse(req, r.ID, raw)
			}
		}
	}
	return nil
}

// savedResponse is an HTTP answer to request req (JSON-RPC ID id) carrying result.
func savedResponse(req *http.Request, id jsonrpc.ID, result json.RawMessage) *http.Response {
	body, err := wire.AppendMessage(nil, &jsonrpc.Response{ID: id, Result: result})
	if err != nil {
		body = nil
	}
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// isInitialize reports whether an outgoing POST body is an initialize request.
func isInitialize(body []byte) bool {
	if !bytes.Contains(body, []byte(`"initialize"`)) {
		return false
	}
	found := false
	wire.ForEachMessage(body, func(_ jsonrpc.ID, method *string, _ json.RawMessage) {
		if method != nil && *method == "initialize" {
			found = true
		}
	})
	return found
}

// secretsWith returns the strings no error may show: the connection's own secrets, the
// OAuth credentials last sent and the values of the call's per-call headers (bridge.WithCallHeaders).
func (rt *roundTripper) secretsWith(perCall http.Header) []string {
	cred := rt.lastCred.Load()
	if len(perCall) == 0 && cred == nil {
		return rt.secrets
	}
	s := slices.Clone(rt.secrets)
	if cred != nil {
		s = append(s, redact.HeaderSecrets(*cred)...)
	}
	return append(s, headerSecrets(perCall)...)
}

// sentCredential records an Authorization value the transport did not set itself and
// reports each new one to Spec.OnCredential.
func (rt *roundTripper) sentCredential(v string) {
	if last := rt.lastCred.Load(); last != nil && *last == v {
		return
	}
	rt.lastCred.Store(&v)
	if rt.onCredential != nil {
		rt.onCredential(v)
	}
}

// headerSecrets returns every value of h with its credentials.
func headerSecrets(h http.Header) []string {
	var s []string
	for _, vs := range h {
		for _, v := range vs {
			s = append(s, redact.HeaderSecrets(v)...)
		}
	}
	return s
}
