package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// killWait is how long Close waits for the process after SIGKILL, and
// stderrWait how long it then waits for the stderr drain to reach EOF; their
// sum is the "+1s" of the Close bound.
const (
	killWait   = 750 * time.Millisecond
	stderrWait = 250 * time.Millisecond
)

// ErrUsed is returned by the Transport's Connect when it is called a second
// time, or after Close.
var ErrUsed = errors.New("transport already used or closed")

// Conn is one single-use connection to one server: Open, hand Transport() to
// mcp.Client.Connect once, use the session, Close. All methods are safe for
// concurrent use.
type Conn struct {
	id     string
	kind   Kind
	grace  time.Duration
	logger *slog.Logger
	cap    capture

	// stdio
	spec   Spec // copy; stdio settings
	exited chan struct{}
	tag    string // TagEnv value of this connection's process tree
	tail   *tailBuffer
	// secrets are masked in stderr lines and the tail: the values of arguments and
	// environment variables named like credentials.
	secrets []string

	// inprocess
	factory func() (mcp.Transport, error)

	// http, sse
	ep    *endpoint
	rt    *roundTripper
	hc    *http.Client
	oauth auth.OAuthHandler // Streamable HTTP only

	started atomic.Bool  // stdio: the process was started
	noise   atomic.Int64 // stdio: non-protocol lines seen on stdout
	// stdio: the error of the first frame over Spec.MaxFrameBytes (it ended the session)
	frameOverrun atomic.Pointer[error]

	mu     sync.Mutex
	used   bool           // Connect was called
	closed bool           // Close was called
	proc   *process       // stdio, once started
	inner  mcp.Connection // http/sse: go-sdk's connection

	client *wire.Client // the direct client (Direct)

	closeOnce sync.Once
	closeErr  error
}

// Open prepares one single-use connection of kind k (normally an element of
// Kinds(s)). It validates s but does no I/O: the process is started or the
// endpoint contacted only in Transport().Connect.
func Open(s Spec, k Kind) (*Conn, error) {
	if k == "" {
		return nil, errors.New("no transport kind given")
	}
	if s.Kind != "" && s.Kind != k {
		return nil, fmt.Errorf("kind %q requested but the server's type is %q", k, s.Kind)
	}
	s2 := s
	s2.Kind = k
	if _, err := Kinds(s2); err != nil {
		return nil, err
	}
	c := &Conn{
		id:     s.ID,
		kind:   k,
		grace:  s.Grace,
		logger: s.Logger,
	}
	if c.grace <= 0 {
		c.grace = DefaultGrace
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	switch k {
	case KindStdio:
		c.tag = newTag()
		c.spec = s
		c.spec.Args = append([]string(nil), s.Args...)
		c.spec.Env = make(map[string]string, len(s.Env))
		maps.Copy(c.spec.Env, s.Env)
		c.exited = make(chan struct{})
		n := s.StderrTailBytes
		if n <= 0 {
			n = DefaultStderrTailBytes
		}
		c.tail = &tailBuffer{max: n}
		c.secrets = append(redact.ArgSecrets(s.Args), redact.EnvSecrets(s.Env)...)
	case KindInProcess:
		c.factory = s.InProcess
	case KindHTTP, KindSSE:
		ep, err := parseEndpoint(s.URL)
		if err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
		c.ep = ep
		c.rt = newRoundTripper(s, k, ep, &c.cap)
		hc := &http.Client{}
		if s.HTTPClient != nil {
			*hc = *s.HTTPClient
		}
		hc.Transport = c.rt
		c.hc = hc
		c.oauth = s.OAuth
		if k == KindHTTP {
			c.client = wire.NewClient(&wire.HTTP{Client: hc, Endpoint: ep.redacted.String(), OAuth: s.OAuth, Budget: c.rt.budget})
		}
	}
	if c.client == nil {
		c.client = wire.NewClient(nil)
	}
	if c.rt != nil {
		c.rt.env, c.rt.session = c.client.Envelope(), c.client.HTTPSession()
	}
	return c, nil
}

// Transport returns the mcp.Transport to hand to mcp.Client.Connect, exactly
// once. Every call returns the same value; a second Connect fails with
// ErrUsed.
//
// For stdio, the process is started in Connect and does not depend on the
// Connect ctx afterwards. For http (Streamable), go-sdk detaches the session
// from the Connect ctx. For sse, go-sdk's GET stream uses the Connect ctx for
// the whole session: the ctx given to Connect must outlive the session
// (cancelling it ends the session).
func (c *Conn) Transport() mcp.Transport { return connTransport{c} }

// connTransport is the mcp.Transport of a Conn.
type connTransport struct{ c *Conn }

// Connect implements mcp.Transport.
func (t connTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return t.c.connect(ctx)
}

func (c *Conn) connect(ctx context.Context) (mcp.Connection, error) {
	c.mu.Lock()
	if c.used || c.closed {
		c.mu.Unlock()
		return nil, ErrUsed
	}
	c.used = true
	if c.kind == KindStdio {
		defer c.mu.Unlock()
		return c.startLocked(ctx)
	}
	c.mu.Unlock()

	var (
		inner mcp.Connection
		err   error
	)
	switch c.kind {
	case KindInProcess:
		var t mcp.Transport
		if t, err = c.factory(); err == nil {
			inner, err = t.Connect(ctx)
		}
	case KindHTTP:
		inner, err = (&mcp.StreamableClientTransport{Endpoint: c.ep.redacted.String(), HTTPClient: c.hc, MaxEventSize: c.rt.budget.eventLimit(), OAuthHandler: c.oauth}).Connect(ctx)
	default:
		inner, err = (&mcp.SSEClientTransport{Endpoint: c.ep.redacted.String(), HTTPClient: c.hc, MaxEventSize: c.rt.budget.eventLimit()}).Connect(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting over %s: %w", c.kind, err)
	}
	c.mu.Lock()
	c.inner = inner
	closed := c.closed
	c.mu.Unlock()
	if closed {
		_ = inner.Close()
		return nil, ErrUsed
	}
	if c.kind == KindHTTP {
		// Unwrapped: go-sdk needs its own concrete connection (protocol
		// version header, standalone GET stream). Capture happens in the
		// RoundTripper.
		c.client.Connected()
		return inner, nil
	}
	cc := &captureConn{Connection: inner, cap: &c.cap, env: c.client.Envelope(), close: c.Close}
	c.client.Attach(&cc.direct, cc.Write)
	return cc, nil
}

// Direct returns the connection's direct client: tools/call sent without go-sdk's
// per-call machinery, giving what go-sdk's ClientSession.CallTool gives (see "Direct tool
// calls" in the package doc). Its type is internal: a host outside this module reaches a
// server's tools through go-sdk's session.
func (c *Conn) Direct() *wire.Client { return c.client }

// TakeTools returns the raw tool objects (each element one entry of
// result.tools, bytes exactly as the server sent them) from every tools/list
// response seen since the previous TakeTools, in wire order, and forgets
// them. go-sdk's ListTools may drop tools (null entries, invalid x-mcp-header)
// that are present here, so match by "name", not by index.
func (c *Conn) TakeTools() []json.RawMessage { return c.cap.take() }

// Stderr returns, for stdio, the tail of the process's stderr: valid UTF-8,
// at most StderrTailBytes bytes (plus replacement characters for invalid
// bytes), with the values of arguments and environment variables named like
// credentials masked. It is "" for http and sse.
func (c *Conn) Stderr() string {
	if c.tail == nil {
		return ""
	}
	return redact.String(c.tail.String(), c.secrets)
}

// NonProtocolLines returns, for stdio, how many lines the server wrote on
// stdout that were not JSON-RPC messages (banners, log lines). Such lines are
// logged at Warn (rate-limited) and skipped; a count above zero is a bug for
// the server's author to fix. It is 0 for other kinds.
func (c *Conn) NonProtocolLines() int64 { return c.noise.Load() }

// exitedCh returns, for stdio, a channel closed once the process has exited
// and been reaped (or, if it was never started, once Close has run). It is
// nil for http and sse.
func (c *Conn) exitedCh() <-chan struct{} {
	if c.kind != KindStdio {
		return nil
	}
	return c.exited
}

// exitErr returns, for stdio, the process's exit error (as from
// exec.Cmd.Wait: nil for exit status 0, an *exec.ExitError otherwise) once
// exitedCh is closed; before that, and for http and sse, it returns nil.
func (c *Conn) exitErr() error {
	if c.kind != KindStdio {
		return nil
	}
	select {
	case <-c.exited:
	default:
		return nil
	}
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.waitErr
}

// pid returns, for stdio, the process ID once the process was started, else 0.
// It is 0 for http and sse.
func (c *Conn) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// Reached reports, for stdio, whether the process was started; for http and
// sse, whether at least one HTTP response came back from the server.
func (c *Conn) Reached() bool {
	switch c.kind {
	case KindStdio:
		return c.started.Load()
	case KindInProcess:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.inner != nil
	}
	return c.rt.reached.Load()
}

// FallbackToSSE reports, for KindHTTP, that the endpoint answered the
// initialize POST the way the MCP spec describes an old HTTP+SSE server:
// status 400, 404 or 405 without a JSON-RPC error in the body (a JSON-RPC
// error, such as -32022 for an unsupported protocol version, comes from a
// Streamable HTTP server and is surfaced as itself), or a 2xx whose content
// type is neither application/json nor text/event-stream. The caller should then Close this
// Conn and Open the same Spec with KindSSE.
func (c *Conn) FallbackToSSE() bool {
	return c.kind == KindHTTP && c.rt.fallback.Load()
}

// Overrun returns the error of the first message the server sent over Spec.MaxFrameBytes,
// or nil: for http and sse wrapping ErrMessageTooLarge and naming the message and the limit,
// for stdio wrapping ErrFrameTooLarge. Once it is non-nil the session is broken.
func (c *Conn) Overrun() error {
	if c.rt == nil {
		if e := c.frameOverrun.Load(); e != nil {
			return *e
		}
		return nil
	}
	return c.rt.budget.err()
}

// Close tears the connection down. It is idempotent and safe to call
// concurrently with the MCP session's own Close (which reaches the same
// teardown through the Connection): all callers wait for the one teardown.
//
// For stdio it closes stdin, waits Grace, SIGTERMs the process group, waits
// Grace, SIGKILLs the group and reaps the process: it returns within about
// 2*Grace + 1s even if the process ignores stdin EOF and SIGTERM. The
// process's exit status is not an error (see ExitError). For http and sse it
// closes go-sdk's connection (Streamable HTTP sends a DELETE for a stateful
// session), waiting at most 2*Grace + 1s.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.teardown() })
	return c.closeErr
}

func (c *Conn) teardown() error {
	c.mu.Lock()
	c.closed = true
	proc, inner := c.proc, c.inner
	c.mu.Unlock()

	if c.kind == KindStdio {
		if proc == nil {
			close(c.exited) // never started: nothing will exit
			return nil
		}
		return c.stopProcess(proc)
	}
	if c.rt != nil {
		c.rt.closing.Store(true)
		if c.rt.own != nil {
			defer c.rt.own.CloseIdleConnections()
		}
	}
	if inner == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- inner.Close() }()
	t := time.NewTimer(2*c.grace + time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("closing %s connection: %w", c.kind, err)
		}
		return nil
	case <-t.C:
		return fmt.Errorf("closing %s connection: timed out", c.kind)
	}
}
