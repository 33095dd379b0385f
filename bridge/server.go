package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/transport"
)

// Server is one live connection to an MCP server. It is safe for concurrent use. Its session
// is redialled on demand when it dies; Close ends it for good.
type Server struct {
	cfg    ServerConfig
	opts   *options
	log    *slog.Logger
	spec   transport.Spec
	client *mcp.Client
	set    *Set // the Set that owns the server; nil for Dial

	life context.Context // cancelled by Close: in-flight calls and redials end with it
	stop context.CancelFunc

	mu        sync.Mutex
	hash      string
	sess      *session               // nil while no live session
	redialing *redialCall            // non-nil while a redial runs
	failures  int                    // consecutive failed (re)dials and session deaths
	lastDial  time.Time              // start of the last (re)dial
	lastErr   error                  // cause of the last failure, for suppressed redials
	closed    bool                   // Close was called
	remote    map[string]*remoteTool // every listed tool by its server name, app-only ones included
	tools     Tools                  // the model-visible tools, named
	status    ServerStatus

	progress progressRoutes // progress tokens of calls in flight
	relist   relistState    // re-listing after tools/list_changed
	notify   notifier       // runs OnToolsChanged outside background work

	uiCache map[string]cachedResource // ui:// resources by URI, when Options.UIResourceCacheTTL > 0

	closeOnce sync.Once
	closeErr  error

	bgMu   sync.Mutex
	bgN    int           // background teardowns and redials running
	bgIdle chan struct{} // closed when bgN drops to 0, for waitBackground
}

// session is one MCP session over one transport connection.
type session struct {
	cs      *mcp.ClientSession
	conn    *transport.Conn
	cancel  context.CancelFunc // ends the session's context (the SSE GET stream lives on it)
	dead    chan struct{}      // closed when the session ended, for whatever reason
	started time.Time

	closeOnce sync.Once
	closeErr  error
}

// remoteTool is one tool as the server listed it, with what the bridge derived from it.
type remoteTool struct {
	name         string
	label        string // `tool "<name>"`, for errors (built once, not per call)
	tool         *mcp.Tool
	schema       json.RawMessage // inputSchema as sent (plus the properties:{} fix)
	meta         json.RawMessage
	outputSchema json.RawMessage
	validator    *lazySchema // nil: validation off for this tool
	outValidator *lazySchema
	ui           apps.ToolUI
	gone         bool // the server stopped offering it after a redial
}

func newRemoteTool(t *mcp.Tool) *remoteTool {
	return &remoteTool{name: t.Name, label: fmt.Sprintf("tool %q", t.Name), tool: t}
}

// retryable reports whether a call that may have reached the server can be sent again.
func (rt *remoteTool) retryable() bool {
	a := rt.tool.Annotations
	return a != nil && (a.ReadOnlyHint || a.IdempotentHint)
}

const (
	maxListPages  = 1000
	sessionClose  = 5 * time.Second // bound on closing one session beyond the transport's own bound
	maxBackoff    = 30 * time.Second
	firstBackoff  = 500 * time.Millisecond
	stderrLogTail = 2048
)

func newServer(cfg ServerConfig, o *options, set *Set) *Server {
	life, stop := context.WithCancel(context.Background())
	log := o.logger.With("server", cfg.ID)
	s := &Server{
		cfg:    cfg,
		opts:   o,
		log:    log,
		set:    set,
		life:   life,
		stop:   stop,
		spec:   transportSpec(cfg, log),
		remote: map[string]*remoteTool{},
		status: ServerStatus{ID: cfg.ID},
	}
	caps := &mcp.ClientCapabilities{}
	if !o.DisableAppsExtension {
		caps.AddExtension(apps.ExtensionID, apps.ClientCapability())
	}
	s.progress.server = cfg.ID
	s.notify.log = log
	s.progress.notify.log = log
	s.client = mcp.NewClient(o.ClientInfo, &mcp.ClientOptions{
		Logger:                      log,
		Capabilities:                caps,
		ProgressNotificationHandler: s.progress.deliver,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.relistSoon()
		},
	})
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hash
}

// Tools returns the model-visible tools of this server, named as in the set it came from.
func (s *Server) Tools() Tools {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(Tools(nil), s.tools...)
}

// Status returns the outcome of the server's start-up; Tools gives the final tool names.
func (s *Server) Status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
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
	kinds, err := transport.Kinds(s.spec)
	if err != nil {
		return nil, PhaseTiming{}, s.serverError(PhaseConfig, err, nil)
	}
	start := time.Now()
	var serr *ServerError
	for i, k := range kinds {
		var sess *session
		var fallback bool
		sess, fallback, serr = s.openKind(ctx, k)
		if serr == nil {
			s.mu.Lock()
			s.status.Transport = string(k)
			s.hash = serverHash(s.cfg, k)
			s.mu.Unlock()
			return sess, PhaseTiming{PhaseInitialize, time.Since(start)}, nil
		}
		s.mu.Lock()
		s.status.Transport = string(k)
		s.mu.Unlock()
		if !fallback || i+1 == len(kinds) || ctx.Err() != nil {
			break
		}
		s.log.Debug("streamable HTTP refused; trying legacy SSE", "err", serr.Err)
	}
	return nil, PhaseTiming{}, serr
}

func (s *Server) openKind(ctx context.Context, k transport.Kind) (*session, bool, *ServerError) {
	conn, err := transport.Open(s.spec, k)
	if err != nil {
		return nil, false, s.serverError(PhaseConfig, err, nil)
	}
	// The session's context must outlive start-up (the SSE transport reads its stream on it),
	// so ctx only cancels it until Connect returns.
	sctx, cancel := context.WithCancel(s.life)
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
	go func() {
		cs, err := s.client.Connect(sctx, conn.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
		done <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
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
		cancel()
		_ = conn.Close()
		return nil, k == transport.KindHTTP && conn.FallbackToSSE(), s.serverError(s.startPhase(conn), s.startErr(ctx, err, started), conn)
	}
	sess := &session{cs: cs, conn: conn, cancel: cancel, dead: make(chan struct{}), started: started}
	go func() {
		_ = cs.Wait()
		close(sess.dead)
	}()
	ir := cs.InitializeResult()
	s.mu.Lock()
	s.status.ProtocolVersion = ir.ProtocolVersion
	if ir.ServerInfo != nil {
		s.status.ServerName, s.status.ServerVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	s.mu.Unlock()
	return sess, false, nil
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
		return errServerClosed
	}
	return err
}

// list fetches every tools/list page and the raw tool objects the transport captured.
func (s *Server) list(ctx context.Context, sess *session) ([]*mcp.Tool, map[string]json.RawMessage, error) {
	var all []*mcp.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, nil, fmt.Errorf("more than %d pages of tools", maxListPages)
		}
		res, err := sess.cs.ListTools(ctx, params)
		if err != nil {
			if page == 0 && isMethodNotFound(err) && sess.cs.InitializeResult().Capabilities.Tools == nil {
				return nil, nil, nil // a server without tools
			}
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("page %d: %w", page+1, s.startErr(ctx, err, sess.started))
			}
			return nil, nil, fmt.Errorf("page %d: %w", page+1, err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return nil, nil, fmt.Errorf("page %d: the server repeated cursor %q", page+1, res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	raw := map[string]json.RawMessage{}
	for _, r := range sess.conn.TakeTools() {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r, &head) == nil {
			if _, dup := raw[head.Name]; !dup {
				raw[head.Name] = r
			}
		}
	}
	return all, raw, nil
}

func isMethodNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}

// convert derives remote tools from a listing. It returns them by name, the names offered to
// the model in listing order, the app-only names, and problems found.
func (s *Server) convert(tools []*mcp.Tool, raw map[string]json.RawMessage) (map[string]*remoteTool, []string, []string, []ToolProblem) {
	remote := make(map[string]*remoteTool, len(tools))
	var model, appOnly []string
	var problems []ToolProblem
	problem := func(tool, msg string, skipped bool) {
		problems = append(problems, ToolProblem{Tool: tool, Problem: msg, Skipped: skipped})
	}
	for _, t := range tools {
		if t == nil || !s.wanted(t.Name) {
			continue
		}
		if _, dup := remote[t.Name]; dup {
			problem(t.Name, "listed twice; the later entry is ignored", false)
			continue
		}
		var parts struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			Meta         json.RawMessage `json:"_meta"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Execution    struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		}
		if r, ok := raw[t.Name]; ok {
			_ = json.Unmarshal(r, &parts)
		} else {
			// The transport saw no raw listing (it always should); fall back to re-encoding.
			parts.InputSchema = marshalNoEscape(t.InputSchema)
			if t.Meta != nil {
				parts.Meta = marshalNoEscape(t.Meta)
			}
			if t.OutputSchema != nil {
				parts.OutputSchema = marshalNoEscape(t.OutputSchema)
			}
			s.log.Debug("raw tools/list bytes not captured; schema re-encoded", "tool", t.Name)
		}
		schema, err := checkSchema(parts.InputSchema)
		if err != nil {
			problem(t.Name, err.Error(), true)
			continue
		}
		if parts.Execution.TaskSupport == "required" {
			// A plain tools/call is refused by the server; offering it would only fail.
			problem(t.Name, `execution.taskSupport is "required": the tool can only run as an MCP task, which mcpbridge does not support`, true)
			continue
		}
		rt := newRemoteTool(t)
		rt.schema, rt.meta, rt.outputSchema = schema, parts.Meta, parts.OutputSchema
		var uiProblems []string
		rt.ui, uiProblems = apps.ParseToolUI(t.Meta)
		for _, p := range uiProblems {
			problem(t.Name, "MCP Apps metadata: "+p, false)
		}
		if !s.opts.DisableValidation {
			if rt.validator, err = checkedSchema(schema); err != nil {
				problem(t.Name, "inputSchema does not compile, arguments are not validated: "+oneLine(err.Error()), false)
			}
			if len(parts.OutputSchema) > 0 {
				if rt.outValidator, err = checkedSchema(parts.OutputSchema); err != nil {
					problem(t.Name, "outputSchema does not compile: "+oneLine(err.Error()), false)
				}
			}
		}
		remote[t.Name] = rt
		if rt.ui.ModelVisible() {
			model = append(model, t.Name)
		} else {
			appOnly = append(appOnly, t.Name)
		}
	}
	for name := range raw {
		if _, ok := remote[name]; !ok && s.wanted(name) && !hasTool(tools, name) {
			problem(name, "dropped by the MCP SDK while decoding tools/list (see its error log)", true)
		}
	}
	return remote, model, appOnly, problems
}

func hasTool(tools []*mcp.Tool, name string) bool {
	for _, t := range tools {
		if t != nil && t.Name == name {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// wanted applies the server's Include and Exclude globs to a tool name.
func (s *Server) wanted(name string) bool {
	if len(s.cfg.Include) > 0 && !matchAny(s.cfg.Include, name) {
		return false
	}
	return !matchAny(s.cfg.Exclude, name)
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

// install makes sess the live session with a fresh listing. Tools named before keep their
// names; tools no longer listed are marked gone.
func (s *Server) install(sess *session, listed []*mcp.Tool, raw map[string]json.RawMessage) {
	s.apply(sess, nil, listed, raw)
}

// apply converts a listing and makes it the server's, with sess as the live session. When
// onlyIf is set, the listing is applied only while onlyIf is still the live session (a
// re-list after tools/list_changed must not undo a redial that happened meanwhile). It
// returns the server's tool names that appeared and disappeared, and whether it applied.
func (s *Server) apply(sess, onlyIf *session, listed []*mcp.Tool, raw map[string]json.RawMessage) (added, removed []string, ok bool) {
	remote, model, appOnly, problems := s.convert(listed, raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if onlyIf != nil && s.sess != onlyIf {
		return nil, nil, false
	}
	for name, rt := range remote {
		if old := s.remote[name]; old == nil || old.gone {
			added = append(added, rt.name)
		}
	}
	for name, old := range s.remote {
		if _, ok := remote[name]; !ok {
			if !old.gone {
				removed = append(removed, name)
			}
			gone := *old
			gone.gone = true
			remote[name] = &gone
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	s.remote = remote
	s.sess = sess
	clear(s.uiCache)
	s.status.AppOnly = appOnly
	// Warn once per problem: a redial lists the same tools again.
	for _, p := range problems {
		if slices.Contains(s.status.Problems, p) {
			continue
		}
		if p.Skipped {
			s.log.Warn("tool skipped", "tool", p.Tool, "problem", p.Problem)
		} else {
			s.log.Warn("tool problem", "tool", p.Tool, "problem", p.Problem)
		}
	}
	s.status.Problems = problems
	if s.tools == nil {
		s.status.ModelTools = model
	}
	return added, removed, true
}

// build names the server's model-visible tools with n (in listing order), keeps them as the
// server's tools, logs renames and returns the tools.
func (s *Server) build(n *namer) Tools {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := s.cfg.Prefix
	if prefix == "" && s.opts.AlwaysPrefix {
		prefix = s.cfg.ID
	}
	tools := make(Tools, 0, len(s.status.ModelTools))
	var renamed []Rename
	for _, remote := range s.status.ModelTools {
		rt := s.remote[remote]
		name, why := n.assign(s.cfg.ID, prefix, remote)
		if why != "" {
			renamed = append(renamed, Rename{Remote: remote, Name: name, Reason: why})
			s.log.Warn("tool renamed", "tool", remote, "name", name, "reason", why)
		}
		tools = append(tools, s.tool(name, rt))
	}
	s.tools = tools
	s.status.Renamed = renamed
	return tools
}

func (s *Server) tool(name string, rt *remoteTool) Tool {
	t := Tool{
		Name:         name,
		Description:  rt.tool.Description,
		Parameters:   rt.schema,
		Server:       s,
		RemoteName:   rt.name,
		UIResource:   rt.ui.ResourceURI,
		Title:        rt.tool.Title,
		Annotations:  rt.tool.Annotations,
		Meta:         rt.meta,
		OutputSchema: rt.outputSchema,
	}
	if t.UIResource != "" {
		t.Description += "\n[UI Resource: " + t.UIResource + "]"
	}
	remote := rt.name
	t.Handler = func(ctx context.Context, args json.RawMessage) (string, error) {
		return s.invoke(ctx, remote, args)
	}
	return t
}
