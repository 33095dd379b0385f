package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// Kind is a transport kind.
type Kind string

// The transport kinds.
const (
	KindStdio Kind = "stdio"
	KindHTTP  Kind = "http" // Streamable HTTP
	KindSSE   Kind = "sse"  // legacy HTTP+SSE (protocol 2024-11-05)
	// KindInProcess is a server in the same process, reached through the mcp.Transport
	// that Spec.InProcess returns (mcp.NewInMemoryTransports, for example).
	KindInProcess Kind = "inprocess"
)

// Defaults applied to zero [Spec] fields.
const (
	DefaultGrace           = 2 * time.Second
	DefaultStderrTailBytes = 8 << 10
)

// Spec holds one server's connection settings. The zero value of every
// optional field selects a documented default. Open copies what it needs; the
// caller may reuse the Spec afterwards.
type Spec struct {
	ID      string            // server ID, used in logs and errors
	Kind    Kind              // "" = infer (see Kinds)
	Command string            // stdio: the program (no shell); Args its arguments
	Args    []string          // stdio: arguments; never logged or put in errors; credential-like values are masked in stderr
	Env     map[string]string // stdio: added to the parent environment (os.Environ()), overriding the same keys; values are never logged, credential-named ones are masked in stderr
	Dir     string            // stdio: working directory; "" = the current one
	URL     string            // http/sse: the endpoint; its userinfo and query values are treated as secrets
	Headers map[string]string // http/sse: set on every HTTP request to the endpoint's host; values are secrets

	// Logger receives stderr lines (Debug, attribute server=<ID>) and
	// transport events. nil discards.
	Logger *slog.Logger
	// StderrTailBytes is the size of the stderr tail kept for Conn.Stderr.
	// 0 selects DefaultStderrTailBytes (8 KiB).
	StderrTailBytes int
	// Grace is the stdio shutdown step: close stdin, wait Grace, SIGTERM the
	// process group, wait Grace, SIGKILL the group. 0 selects DefaultGrace (2s).
	Grace time.Duration
	// MaxFrameBytes caps one inbound message on every transport: a stdio
	// JSON-RPC frame, an HTTP response body (application/json, or an error
	// body), one SSE event. A server that sends more breaks its session (see
	// Conn.Overrun). 0 selects DefaultMaxMessageBytes (16 MiB); a negative
	// value disables the cap.
	MaxFrameBytes int
	// NudgeAfter is, for stdio, how long a request may go unanswered while the server sends
	// nothing before the connection writes the server a ping of its own, so that a server
	// holding a finished answer until its next input line lets it go; it pings again at most
	// once per NudgeAfter while that lasts, and only once the server has answered a first
	// request. The ping's answer never reaches a caller. 0 selects DefaultNudgeAfter (2s); a negative value turns it off.
	NudgeAfter time.Duration
	// InProcess, when set, makes this an in-process server: it is called once per Open'd
	// connection and must return a fresh, unused mcp.Transport to the server (whose side
	// must already be connected). Command and URL must then be empty.
	InProcess func() (mcp.Transport, error)
	// HTTPClient is the base client for http/sse. Its Transport (nil:
	// http.DefaultTransport) is wrapped; the caller's client is not modified.
	// nil selects a new client over http.DefaultTransport with no Timeout
	// (a Timeout would cut long-lived SSE streams).
	HTTPClient *http.Client
	// OAuth, when set, authorizes Streamable HTTP requests (go-sdk's auth.OAuthHandler: its
	// token on every request, its Authorize after a 401 or 403). The legacy SSE transport
	// does not support it.
	OAuth auth.OAuthHandler
	// WrapBase, when set, wraps the RoundTripper under a Streamable HTTP connection: it sees
	// each request as sent, with the real URL and every header in place (the bridge adds
	// DPoP proofs with it).
	WrapBase func(http.RoundTripper) http.RoundTripper
	// OnCredential, when set, is called with each new Authorization header value the
	// transport sends to the endpoint that neither Headers nor a per-call header set (the
	// OAuth handler's bearer token), so the caller can mask it in text it shows. It is
	// called on the request's goroutine and must not block.
	OnCredential func(value string)
}

// Kinds returns the transport kinds to try for s, in order: an explicit Kind
// gives [Kind]; a Command gives [stdio]; a URL gives [http sse] (Streamable
// HTTP first, legacy SSE as the fallback; see Conn.FallbackToSSE).
//
// It returns an error naming the server and the field when neither or both of
// Command and URL are set, Kind is unknown, Kind conflicts with the fields, or
// the URL is not an absolute http(s) URL. Errors never contain the URL's
// userinfo or query.
func Kinds(s Spec) ([]Kind, error) {
	hasCmd, hasURL := s.Command != "", s.URL != ""
	if s.InProcess != nil || s.Kind == KindInProcess {
		switch {
		case s.InProcess == nil:
			return nil, fmt.Errorf("type %q needs an in-process transport", s.Kind)
		case hasCmd || hasURL:
			return nil, errors.New("an in-process server takes neither command nor url")
		case s.Kind != "" && s.Kind != KindInProcess:
			return nil, fmt.Errorf("type %q conflicts with the in-process transport", s.Kind)
		}
		return []Kind{KindInProcess}, nil
	}
	switch {
	case hasCmd && hasURL:
		return nil, errors.New("both command and url are set; use one")
	case !hasCmd && !hasURL:
		return nil, errors.New("neither command nor url is set")
	}
	switch s.Kind {
	case "":
	case KindStdio:
		if !hasCmd {
			return nil, fmt.Errorf("type %q needs a command", s.Kind)
		}
	case KindHTTP, KindSSE:
		if !hasURL {
			return nil, fmt.Errorf("type %q needs a url", s.Kind)
		}
	default:
		return nil, fmt.Errorf("unknown type %q (want stdio, http or sse)", s.Kind)
	}
	if hasURL {
		if _, err := parseEndpoint(s.URL); err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
	}
	switch {
	case s.Kind != "":
		return []Kind{s.Kind}, nil
	case hasCmd:
		return []Kind{KindStdio}, nil
	default:
		return []Kind{KindHTTP, KindSSE}, nil
	}
}

// errURLSyntax is returned (unwrapped from url.Parse, whose errors quote the
// whole URL) when an endpoint does not parse.
var errURLSyntax = errors.New("not a valid URL")

// endpoint is a parsed http(s) endpoint split into the part go-sdk may see
// (redacted) and the secrets.
type endpoint struct {
	real     *url.URL      // the URL to send, without userinfo and fragment
	user     *url.Userinfo // nil if none
	redacted *url.URL      // what go-sdk sees: no userinfo, query values "***"
}

// parseEndpoint parses raw. Its errors never contain raw.
func parseEndpoint(raw string) (*endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errURLSyntax
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		// The scheme is not printed: in a mistyped URL ("user:pw@host")
		// it can be a secret.
		return nil, errors.New("scheme is not http or https")
	}
	if u.Host == "" {
		return nil, errors.New("no host")
	}
	if u.Opaque != "" {
		return nil, errURLSyntax
	}
	real := *u
	real.User = nil
	real.Fragment, real.RawFragment = "", ""
	red := real
	red.RawQuery = redact.Query(u.RawQuery)
	red.ForceQuery = false
	// Round-trip the redacted URL through its string form, as go-sdk will,
	// so that comparisons in the RoundTripper see exactly what go-sdk sends.
	r2, err := url.Parse(red.String())
	if err != nil {
		return nil, errURLSyntax
	}
	return &endpoint{real: &real, user: u.User, redacted: r2}, nil
}
