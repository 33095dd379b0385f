package bridge

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/bridge/skills"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/transport"
)

// Server is one live connection to an MCP server. It is safe for concurrent use. Its session
// is redialled on demand when it dies; Close ends it for good.
//
// A dead session (process exit, EOF, HTTP 404 session expiry, an oversized frame) is
// redialled on the next call, one redial shared by concurrent callers, with backoff against
// crash loops (firstBackoff doubling to maxBackoff, see Limits); a user's own session (a
// per-user server, UserOptions) is redialled on the same schedule. A call that failed because
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
	// perUser says the server keeps state per user: an AuthOAuth server (its OAuth handler
	// made).
	perUser bool
	// configErr is a configuration problem found by newServer; open reports it.
	configErr error
	// secrets are masked in the server's errors and log lines (secrets.go).
	secrets *secretBook

	life context.Context // cancelled by Close: in-flight calls and redials end with it
	stop context.CancelFunc

	// Locks (the order of package bridge). A lock may be taken while holding the ones
	// listed before it on its line, never the other way round:
	//
	//	session.Pool's locks (internal/session documents its order) -> Server.catMu
	//	catalog.Relister.mu -> session.Pool.bgMu
	//	Server.catMu, notifier.mu, Set.mu, secretBook.mu, telemetry.mu, FileTokenStore.mu,
	//	tasks.Client.mu, tasks.Run.mu: leaves
	//
	// (internal/schemaguard and bridge/auth document their own, all leaves but
	// auth.Handler.mu -> its token sources' locks; transport's are its own.) No lock is
	// held while calling out: not a host callback (hooks, OnStatus, OnToolsChanged,
	// OnAppResult, OnElicitation, OnTaskStatus, progress, a TokenStore, an Authorizer), not the logger
	// (whose handler may be slow, or call back into the server), not OpenTelemetry's
	// providers, not go-sdk, not the network. Code that must log what it found under a lock
	// collects it (catalog.LogLater) and logs after unlocking.

	// pool holds the server's sessions: the shared one and its users' (internal/session).
	pool *session.Pool

	catMu  sync.Mutex // guards the catalogue below
	hash   string
	remote map[string]*catalog.Tool // every listed tool by its server name, app-only ones included
	tools  Tools                    // the model-visible tools, named
	status ServerStatus
	// uiCache holds ui:// resources by URI, when Options.UIResourceCacheTTL > 0 (nil
	// otherwise); catMu guards it.
	uiCache *apps.ResourceCache

	schemas  schemaguard.Cache      // measured and compiled schemas by their bytes
	progress session.ProgressRoutes // progress tokens of calls in flight
	tasks    *tasks.Client          // the MCP tasks client: policy and tasks in flight (tasks.go)
	relist   catalog.Relister       // re-listing after tools/list_changed
	notify   session.Notifier       // runs OnToolsChanged outside background work
	skills   *skills.Catalog        // Options.Skills: listed at assembly (skills.go); catMu guards it

	closeOnce sync.Once
	closeErr  error
}

// firstBackoff is the first wait before redialling a server whose session died (maxBackoff caps it).
const firstBackoff = 500 * time.Millisecond

func newServer(cfg ServerConfig, o *options, set *Set) *Server {
	life, stop := context.WithCancel(context.Background())
	book := newSecretBook(cfg)
	log := slog.New(redact.NewHandler(o.logger.Handler(), book.Book)).With("server", cfg.ID)
	s := &Server{
		cfg:     cfg,
		opts:    o,
		log:     log,
		set:     set,
		life:    life,
		stop:    stop,
		spec:    transportSpec(cfg, o, log),
		secrets: book,
		remote:  map[string]*catalog.Tool{},
		status:  ServerStatus{ID: cfg.ID},
		uiCache: apps.NewResourceCache(o.UIResourceCacheTTL, maxUICache),
	}
	s.spec.OnCredential = book.AddCredential
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
	s.perUser = s.oauth != nil && cfg.Auth != nil && cfg.Auth.Type == AuthOAuth
	s.logins = newLogins(s)
	s.progress.Server = cfg.ID
	s.notify.Log = log
	s.progress.Notify.Log = log
	copts := &mcp.ClientOptions{
		Logger:                      log,
		Capabilities:                caps,
		ProgressNotificationHandler: s.progress.Deliver,
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			s.pool.ToolsChanged(req.Session) // per-user catalogues
			relistSoon(s)
		},
	}
	if o.OnElicitation != nil {
		caps.Elicitation = elicitationCapabilities()
		copts.ElicitationHandler = s.elicit
	}
	if o.Skills {
		caps.AddExtension(skills.Extension, map[string]any{})
	}
	if s.tasks.Mode() != TasksNever {
		caps.AddExtension(tasks.Extension, map[string]any{})
	}
	s.client = mcp.NewClient(o.ClientInfo, copts)
	if err := tasks.RegisterMethods(s.client); err != nil && s.configErr == nil {
		s.configErr = err
	}
	if err := skills.RegisterMethods(s.client); err != nil && s.configErr == nil {
		s.configErr = err
	}
	if !o.Tasks.Valid() { // cfg's own values passed config.Validate in dial
		s.configErr = fmt.Errorf("unknown task mode %q (want auto, always or never)", cmp.Or(string(cfg.Tasks), string(o.Tasks)))
	}
	s.pool = newPool(s)
	s.client.AddSendingMiddleware(s.pool.SendingMiddleware)
	s.client.AddReceivingMiddleware(s.pool.ReceivingMiddleware)
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
	sess := s.pool.Current()
	s.catMu.Lock()
	st := s.status
	s.catMu.Unlock()
	if sess != nil {
		st.NonProtocolLines = sess.Conn.NonProtocolLines()
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

// ReadResource reads a resource (for MCP Apps, the ui:// HTML) from the server. With
// Options.UIResourceCacheTTL set, ui:// results are served from a small per-server cache
// (emptied when the session is redialled); callers must not modify a returned result.
func (s *Server) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	s.catMu.Lock()
	res := s.uiCache.Get(uri)
	s.catMu.Unlock()
	if res != nil {
		return res, nil
	}
	err := s.do(ctx, PhaseRead, fmt.Sprintf("resource %q", uri), true, func(ctx context.Context, sess *session.Session) error {
		var err error
		res, err = sess.CS.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	if err == nil {
		s.catMu.Lock()
		s.uiCache.Put(uri, res)
		s.catMu.Unlock()
	}
	return res, err
}

// Ping checks that the server answers.
func (s *Server) Ping(ctx context.Context) error {
	return s.do(ctx, PhasePing, "ping", true, func(ctx context.Context, sess *session.Session) error {
		return sess.CS.Ping(ctx, nil)
	})
}

// Close ends the server: in-flight calls are cancelled, the session is closed and a stdio
// process (with its whole process group) is terminated. Close is bounded in time and
// idempotent; later calls fail with "server closed".
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		// In-flight calls, redials and the users' sessions end; refreshed tokens being
		// saved (the server's grant and its users') are kept.
		if err := s.pool.Close(s.stop); err != nil {
			s.closeErr = &ServerError{Server: s.cfg.ID, Phase: PhaseClose, Err: err}
		}
	})
	return s.closeErr
}
