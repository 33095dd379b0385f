package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// Server is one live connection to an MCP server. It is safe for concurrent use. Its session
// is redialled on demand when it dies; Close ends it for good.
//
// A dead session (process exit, EOF, HTTP 404 session expiry, an oversized frame) is
// redialled on the next call, one redial shared by concurrent callers, with backoff against
// crash loops (firstBackoff doubling to maxBackoff, see Limits). A call that failed because
// the session died is retried after the redial only when it cannot have reached the server
// or the tool is annotated readOnlyHint or idempotentHint; otherwise the error says the tool
// may have run. After Close every request fails wrapping ErrServerClosed.
type Server struct {
	cfg    ServerConfig
	opts   *options
	log    *slog.Logger
	spec   transport.Spec
	client *mcp.Client
	set    *Set          // the Set that owns the server; nil for Dial
	oauth  *auth.Handler // nil unless cfg.Auth is set
	logins *auth.Logins  // a web host's logins (users_login.go)
	// configErr is a configuration problem found by newServer; open reports it.
	configErr error
	// secrets are masked in the server's errors and log lines (secrets.go).
	secrets *secretBook

	life context.Context // cancelled by Close: in-flight calls and redials end with it
	stop context.CancelFunc

	// Locks (the whole order of package bridge). A lock may be taken while holding the
	// ones listed before it on its line, never the other way round:
	//
	//	Server.mu      -> Server.catMu, Server.bgMu
	//	relistState.mu -> Server.bgMu
	//	userTable.mu   -> Server.bgMu
	//	Server.catMu, Server.bgMu, protocolState.mu, negotiation.mu, listenHolds.mu, notifier.mu,
	//	Set.mu, secretBook.mu, telemetry.mu, FileTokenStore.mu, tasks.Client.mu, tasks.Run.mu:
	//	leaves
	//
	// (internal/schemaguard and bridge/auth document their own, all leaves but
	// auth.Handler.mu -> its token sources' locks; transport's are its own.) No lock is
	// held while calling out: not a host callback (hooks, OnStatus, OnToolsChanged,
	// OnAppResult, OnElicitation, OnTaskStatus, progress, a TokenStore, an Authorizer), not the logger
	// (whose handler may be slow, or call back into the server), not OpenTelemetry's
	// providers, not go-sdk, not the network. Code that must log what it found under a lock
	// collects it (logLater) and logs after unlocking.

	mu        sync.Mutex // guards the connection state below
	sess      *session   // nil while no live session
	redialing *redialCall
	failures  int         // consecutive failed (re)dials and session deaths
	failing   atomic.Bool // failures > 0 (set under mu), read without mu by healthy
	lastDial  time.Time   // start of the last (re)dial
	lastErr   error       // cause of the last failure, for suppressed redials
	closed    bool        // Close was called

	catMu  sync.Mutex // guards the catalogue below
	hash   string
	remote map[string]*remoteTool // every listed tool by its server name, app-only ones included
	tools  Tools                  // the model-visible tools, named
	status ServerStatus
	// uiCache holds ui:// resources by URI, when Options.UIResourceCacheTTL > 0.
	uiCache map[string]cachedResource

	schemas  schemaguard.Cache // measured and compiled schemas by their bytes
	progress progressRoutes    // progress tokens of calls in flight
	tasks    *tasks.Client     // the MCP tasks client: policy and tasks in flight (tasks.go)
	relist   relistState       // re-listing after tools/list_changed
	notify   notifier          // runs OnToolsChanged outside background work
	proto    protocolState     // the protocol version to keep for redials
	paths    pathCounts        // tools/call by path (callpath.go)
	users    userTable         // per-user handlers, sessions and logins (users.go)
	listens  listenHolds       // subscriptions/listen held while a set starts (listenhold.go)

	closeOnce sync.Once
	closeErr  error

	bgMu   sync.Mutex
	bgN    int           // background teardowns and redials running
	bgIdle chan struct{} // closed when bgN drops to 0, for waitBackground
}

// firstBackoff is the first wait before redialling a server whose session died (maxBackoff caps it).
const firstBackoff = 500 * time.Millisecond

func newServer(cfg ServerConfig, o *options, set *Set) *Server {
	life, stop := context.WithCancel(context.Background())
	book := newSecretBook(cfg)
	log := slog.New(&maskingHandler{inner: o.logger.Handler(), book: book}).With("server", cfg.ID)
	s := &Server{
		cfg:     cfg,
		opts:    o,
		log:     log,
		set:     set,
		life:    life,
		stop:    stop,
		spec:    transportSpec(cfg, o, log),
		secrets: book,
		remote:  map[string]*remoteTool{},
		status:  ServerStatus{ID: cfg.ID},
	}
	s.spec.OnCredential = book.addCredential
	s.tasks = newTasks(s, cfg, o)
	caps := &mcp.ClientCapabilities{}
	if !o.DisableAppsExtension {
		caps.AddExtension(apps.ExtensionID, apps.ClientCapability())
	}
	if cfg.Auth != nil {
		h, err := newOAuthHandler(cfg, o, log)
		if err != nil {
			s.configErr = err
		} else {
			s.oauth = h
			s.spec.OAuth = h
			s.spec.WrapBase = h.WrapTransport
		}
	}
	s.logins = newLogins(s)
	s.progress.server = cfg.ID
	s.notify.log = log
	s.progress.notify.log = log
	copts := &mcp.ClientOptions{
		Logger:                      log,
		Capabilities:                caps,
		ProgressNotificationHandler: s.progress.deliver,
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			s.userToolsChanged(req.Session) // users_catalogue.go
			s.relistSoon()
		},
	}
	if o.OnElicitation != nil {
		caps.Elicitation = elicitationCapabilities()
		copts.ElicitationHandler = s.elicit
	}
	if s.tasks.Mode() != TasksNever {
		caps.AddExtension(tasks.Extension, map[string]any{})
	}
	s.client = mcp.NewClient(o.ClientInfo, copts)
	s.client.AddSendingMiddleware(s.sendingMiddleware)
	s.client.AddReceivingMiddleware(s.receivingMiddleware)
	if err := tasks.RegisterMethods(s.client); err != nil && s.configErr == nil {
		s.configErr = err
	}
	if !o.Tasks.Valid() { // cfg's own values passed config.Validate in dial
		s.configErr = fmt.Errorf("unknown task mode %q (want auto, always or never)", cmp.Or(string(cfg.Tasks), string(o.Tasks)))
	}
	return s
}

// ID returns the server's configured ID.
func (s *Server) ID() string { return s.cfg.ID }

// Config returns the server's configuration.
func (s *Server) Config() ServerConfig { return s.cfg }

// Hash returns the server hash frontends use instead of the URL: for http and sse servers the
// value of apps.ServerHash(<transport>, URL) (compatible with @ag-ui/mcp-apps-middleware), for
// stdio servers apps.StdioHash(Command, Args).
func (s *Server) Hash() string {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	return s.hash
}

// Tools returns the model-visible tools of this server, named as in the set it came from.
func (s *Server) Tools() Tools {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	return append(Tools(nil), s.tools...)
}

// Status returns the outcome of the server's start-up; Tools gives the final tool names.
func (s *Server) Status() ServerStatus {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	s.catMu.Lock()
	st := s.status
	s.catMu.Unlock()
	if sess != nil {
		st.NonProtocolLines = sess.conn.NonProtocolLines()
	}
	return st
}

func (s *Server) serverError(phase Phase, err error, conn *transport.Conn) *ServerError {
	e := &ServerError{Server: s.cfg.ID, Phase: phase, Err: err}
	if conn != nil {
		e.Stderr = conn.Stderr()
	}
	return e
}

// open starts one session: spawn or dial, then initialize, trying Streamable HTTP before
// legacy SSE when the type is inferred from a URL. ctx bounds the start-up only; the session
// lives until it dies or the server is closed.
func (s *Server) open(ctx context.Context) (*session, PhaseTiming, *ServerError) {
	if s.configErr != nil {
		return nil, PhaseTiming{}, s.serverError(PhaseConfig, s.configErr, nil)
	}
	kinds, err := transport.Kinds(s.spec)
	if err == nil && s.oauth != nil && (len(kinds) != 1 || kinds[0] != transport.KindHTTP) {
		if len(kinds) > 1 && kinds[0] == transport.KindHTTP {
			kinds = kinds[:1] // OAuth is Streamable HTTP only: no SSE fallback
		} else {
			err = errors.New("auth: OAuth needs a Streamable HTTP server (type http)")
		}
	}
	if err != nil {
		return nil, PhaseTiming{}, s.serverError(PhaseConfig, err, nil)
	}
	if s.oauth != nil {
		// One connection attempt: an interactive authorization that fails ends it.
		ctx = auth.WithAttempt(ctx)
	}
	start := time.Now()
	var serr *ServerError
	for i, k := range kinds {
		var sess *session
		var fallback bool
		sess, fallback, serr = s.openKind(ctx, k)
		if serr == nil {
			s.catMu.Lock()
			s.status.Transport = string(k)
			s.hash = serverHash(s.cfg, k)
			s.catMu.Unlock()
			return sess, PhaseTiming{PhaseInitialize, time.Since(start)}, nil
		}
		s.catMu.Lock()
		s.status.Transport = string(k)
		s.catMu.Unlock()
		if !fallback || i+1 == len(kinds) || ctx.Err() != nil {
			break
		}
		s.log.Debug("streamable HTTP refused; trying legacy SSE", "err", serr.Err)
	}
	return nil, PhaseTiming{}, serr
}

// openAttempt starts one session over kind k, offering protocol version pin ("" negotiates,
// with n observing server/discover).
func (s *Server) openAttempt(ctx context.Context, k transport.Kind, pin string, n *negotiation) (*session, bool, *ServerError) {
	conn, err := transport.Open(s.spec, k)
	if err != nil {
		return nil, false, s.serverError(PhaseConfig, err, nil)
	}
	// The session's context must outlive start-up (the SSE transport reads its stream on it),
	// so ctx only cancels it until Connect returns.
	sctx, cancel := context.WithCancel(s.life)
	sctx = auth.CopyAttempt(ctx, sctx)
	stopAfter := context.AfterFunc(ctx, cancel)
	started := time.Now()
	// go-sdk's Connect closes the session when initialize fails, and that close waits for
	// the transport's teardown (seconds for a process that ignores stdin EOF). So Connect
	// runs on its own goroutine: when ctx ends first, the teardown finishes in the
	// background and ctx stays an upper bound on start-up.
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan connected, 1)
	initTap := newInitTap() // the raw initialize result: the server's tasks capability
	go func() {
		cs, err := s.client.Connect(wire.WithTap(withNegotiation(sctx, n), initTap), conn.Transport(), sessionOptions(pin))
		done <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
	defer initTap.Done()
	select {
	case r := <-done:
		cs, err = r.cs, r.err
		if !stopAfter() && err == nil {
			err = ctx.Err()
			_ = cs.Close()
		}
	case <-ctx.Done():
		stopAfter()
		cancel()
		err = ctx.Err()
		s.background(func() {
			if r := <-done; r.cs != nil {
				_ = r.cs.Close()
			}
			_ = conn.Close()
		})
		return nil, false, s.serverError(s.startPhase(conn), s.startErr(ctx, err, started), conn)
	}
	if err != nil {
		if over := conn.Overrun(); over != nil {
			err = fmt.Errorf("%w (Options.MaxMessageBytes)", over)
		}
		cancel()
		_ = conn.Close()
		return nil, k == transport.KindHTTP && conn.FallbackToSSE(), s.serverError(s.startPhase(conn), s.startErr(ctx, err, started), conn)
	}
	ir := cs.InitializeResult()
	sess := &session{cs: cs, conn: conn, cancel: cancel, dead: make(chan struct{}), started: started,
		taskCaps: tasks.ReadCaps(initTap.Result(), ir, ir.ProtocolVersion >= modernVersion)}
	go func() {
		_ = cs.Wait()
		close(sess.dead)
	}()
	s.catMu.Lock()
	s.status.ProtocolVersion = ir.ProtocolVersion
	s.status.Instructions = cleanInstructions(ir.Instructions)
	s.status.Tasks = sess.taskCaps.String()
	if ir.ServerInfo != nil {
		s.status.ServerName, s.status.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	s.catMu.Unlock()
	return sess, false, nil
}

// ReadResource reads a resource (for MCP Apps, the ui:// HTML) from the server. With
// Options.UIResourceCacheTTL set, ui:// results are served from a small per-server cache
// (emptied when the session is redialled); callers must not modify a returned result.
func (s *Server) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if res := s.cachedUI(uri); res != nil {
		return res, nil
	}
	var res *mcp.ReadResourceResult
	err := s.do(ctx, PhaseRead, fmt.Sprintf("resource %q", uri), true, func(ctx context.Context, sess *session) error {
		var err error
		res, err = sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	if err == nil {
		s.cacheUI(uri, res)
	}
	return res, err
}

// Ping checks that the server answers.
func (s *Server) Ping(ctx context.Context) error {
	return s.do(ctx, PhasePing, "ping", true, func(ctx context.Context, sess *session) error {
		return sess.cs.Ping(ctx, nil)
	})
}

// Close ends the server: in-flight calls are cancelled, the session is closed and a stdio
// process (with its whole process group) is terminated. Close is bounded in time and
// idempotent; later calls fail with "server closed".
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		sess := s.sess
		s.sess = nil
		s.mu.Unlock()
		s.stop()
		s.listens.clear()
		// Teardowns of dead sessions and an interrupted redial finish alongside.
		var wg sync.WaitGroup
		wg.Go(func() { s.waitBackground(sessionClose) })
		wg.Go(s.closeUsers)
		// Refreshed tokens being saved (the server's grant and its users') are kept.
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), sessionClose)
			defer cancel()
			for _, h := range s.oauthHandlers() {
				h.Flush(ctx)
			}
		})
		if sess != nil {
			if err := sess.close(); err != nil {
				s.closeErr = &ServerError{Server: s.cfg.ID, Phase: PhaseClose, Err: err}
			}
		}
		wg.Wait()
	})
	return s.closeErr
}

// startPhase is the phase a failed start-up ended in: start until the process was started
// or the endpoint answered, initialize after.
func (s *Server) startPhase(conn *transport.Conn) Phase {
	if conn.Reached() {
		return PhaseInitialize
	}
	return PhaseStart
}

// startErr explains a failed start-up, naming a timeout or cancellation as such.
func (s *Server) startErr(ctx context.Context, err error, started time.Time) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("timed out after %s: %w", time.Since(started).Round(time.Millisecond), context.DeadlineExceeded)
	case ctx.Err() != nil:
		return fmt.Errorf("canceled: %w", ctx.Err())
	case s.life.Err() != nil:
		return ErrServerClosed
	}
	return err
}

func marshalNoEscape(v any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
