package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/session"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/internal/catalog"
)

// Tools is a list of tools from one or more servers, in a stable order. It is assignable to
// []Tool, so append(agentTools, tools...) works, and json.Marshal gives the list a model API
// takes.
type Tools []Tool

// Close closes every server behind the tools: for tools from Connect (or ConnectServers),
// the whole Set they came from, including servers whose tools are all app-only; for tools
// of a Server from Dial, that server. It is for the ConnectServers one-liner; code that holds
// the *Set closes the Set. Bounded in time, concurrent, safe to call more than once.
func (t Tools) Close() error {
	var cs []io.Closer
	for _, tool := range t {
		if s := tool.Server; s != nil && s.set != nil && !slices.Contains(cs, io.Closer(s.set)) {
			cs = append(cs, s.set)
		} else if s != nil && s.set == nil && !slices.Contains(cs, io.Closer(s)) {
			cs = append(cs, s)
		}
	}
	return closeAll(cs)
}

// closeAll closes every one of cs concurrently (each Close is bounded) and joins the errors.
func closeAll[C io.Closer](cs []C) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Set is what Connect returns: it owns every server it connected, including servers whose
// tools are all hidden from the model (MCP App-only servers), until Close. Its methods are
// safe for concurrent use.
//
// A server only the token store (ErrTokenStore) failed to start is started again in the
// background on the redial backoff, up to session.MaxStoreRetries times; once up it leaves
// Failed and joins Servers and Tools in config order, its tools named after the others', and
// OnToolsChanged (Added) and OnStatus (Retries) say so. A Search index built before lacks it.
type Set struct {
	view    atomic.Pointer[setView] // replaced whole by rejoined
	ids     []string                // every configured server's ID, config order
	retries session.StoreRetries    // starts of servers the token store failed (rejoined)

	proxyAccess apps.HandlerOptions // Options.ProxyAccess, copied
	users       *UserOptions        // Options.Users

	searchOnce sync.Once
	search     *ToolIndex // built by the first Search

	// mu guards failing: the servers that failed to start, whose teardown (a process that
	// is slow to exit) may still run; Close waits for it, so nothing outlives the Set.
	mu      sync.Mutex
	failing []*Server

	closeOnce sync.Once
	closeErr  error
}

// setView is what a Set offers; never changed once stored (Set.view).
type setView struct {
	servers []*Server      // connected servers, config order
	failed  []*ServerError // skipped servers, config order
	tools   Tools          // model-visible tools, named across the set
}

// failedToStart records s, a server of the set that failed to start, for Close to wait on.
func (set *Set) failedToStart(s *Server) {
	set.mu.Lock()
	set.failing = append(set.failing, s)
	set.mu.Unlock()
}

// ConnectServers is the one-liner: Connect with a background context and default Options. It
// returns the tools of every server that could be reached; failures are logged through
// slog.Default() and skipped. Close the result (Tools.Close) when done. Invalid input
// (servers without an ID, duplicate IDs) or a Required server that failed gives no tools.
// When no server offers the model a tool, every server it connected (app-only ones
// included) is closed before it returns: an empty result has nothing left to close.
func ConnectServers(cfgs []ServerConfig) Tools {
	set, err := Connect(context.Background(), cfgs, nil)
	if err != nil {
		slog.Default().Error("mcp servers not connected", "err", err)
		return nil
	}
	tools := set.Tools()
	if len(tools) == 0 {
		// Tools.Close finds the Set through the tools; with none, nobody could close it.
		if err := set.Close(); err != nil {
			slog.Default().Warn("mcp servers closed: no model-visible tool", "err", err)
		}
		return nil
	}
	return tools
}

// Connect dials every server concurrently (up to 32 at once: Limits), lists every page of its
// tools and returns the Set that owns them. Tools come back in config order, each server's in
// its tools/list order, whatever order the servers answered in; names are made unique across
// the set (see the package doc). A server that fails is logged once and skipped: it is in
// Set.Failed(), never Connect's error.
//
// The error is non-nil only when nothing should run: invalid input (a server without an ID,
// two servers with one ID), a server marked Required that failed, or ctx ending before
// assembly finished. Then every process and connection Connect started has been closed, and
// the Set is nil. Otherwise close the Set when done.
//
// ctx bounds start-up only (with each server's ConnectTimeout); the sessions outlive it.
func Connect(ctx context.Context, cfgs []ServerConfig, opts *Options) (*Set, error) {
	if err := config.CheckIDs(cfgs); err != nil {
		return nil, err
	}
	o := resolve(opts)
	set := &Set{proxyAccess: o.ProxyAccess, users: o.Users,
		retries: session.StoreRetries{Limits: session.Limits{FirstBackoff: firstBackoff, MaxBackoff: maxBackoff}}}
	servers := make([]*Server, len(cfgs))
	errs := make([]*ServerError, len(cfgs))
	dctx := ctx
	if len(cfgs) > 1 {
		dctx = session.WithListenHold(ctx) // internal/session, listenhold.go
	}
	gate := make(chan struct{}, maxDials) // a server's connect timeout starts once it has a place
	var wg sync.WaitGroup
	v := &setView{}
	set.view.Store(v) // filled before the set is shared
	for i, cfg := range cfgs {
		set.ids = append(set.ids, cfg.ID)
		wg.Go(func() { gate <- struct{}{}; servers[i], errs[i] = dial(dctx, cfg, o, set, 0); <-gate })
	}
	wg.Wait()

	for i, s := range servers {
		if s != nil {
			v.servers = append(v.servers, s)
		} else {
			v.failed = append(v.failed, errs[i])
		}
	}
	fatal := ctx.Err()
	if fatal != nil {
		fatal = fmt.Errorf("connect: %w", fatal)
	}
	for i, cfg := range cfgs {
		if fatal == nil && cfg.Required && errs[i] != nil {
			fatal = fmt.Errorf("required %w", errs[i])
		}
	}
	if fatal != nil {
		_ = set.Close()
		return nil, fatal
	}
	n := catalog.NewNamer()
	for _, s := range v.servers {
		v.tools = append(v.tools, s.build(n)...)
	}
	if len(v.tools) == 0 && len(v.servers) > 0 {
		o.logger.Warn("no server offered the model a tool", "servers", len(v.servers))
	}
	for _, serr := range v.failed {
		set.retries.Go(serr, func(ctx context.Context, n int) bool {
			s, err := dial(ctx, cfgs[slices.Index(set.ids, serr.Server)], o, set, n)
			return s == nil && session.StoreOnly(err)
		})
	}
	return set, nil
}

// rejoined puts s, started on its attempt-th retry (see Set; 0: at Connect, a no-op), in set.
func (set *Set) rejoined(s *Server, attempt int) {
	if attempt == 0 {
		return
	}
	before := func(a, b string) bool { return slices.Index(set.ids, a) < slices.Index(set.ids, b) }
	for old := set.view.Load(); ; old = set.view.Load() { // again after a concurrent rejoin
		v := *old
		n := catalog.NewNamer()
		for _, t := range v.tools {
			n.Take(t.Name)
		}
		v.servers = append(slices.Clip(v.servers), s)
		sort.SliceStable(v.servers, func(i, j int) bool { return before(v.servers[i].cfg.ID, v.servers[j].cfg.ID) })
		v.tools = append(slices.Clip(v.tools), s.build(n)...)
		sort.SliceStable(v.tools, func(i, j int) bool { return before(v.tools[i].Server.cfg.ID, v.tools[j].Server.cfg.ID) })
		v.failed = slices.DeleteFunc(slices.Clone(v.failed), func(e *ServerError) bool { return e.Server == s.cfg.ID })
		if set.view.CompareAndSwap(old, &v) {
			break
		}
	}
	s.catMu.Lock()
	s.status.Retries = attempt
	change := ToolsChange{Server: s.cfg.ID, Added: s.status.ModelTools}
	s.catMu.Unlock()
	s.log.Info("mcp server started after the token store failed its start-up", "retries", attempt)
	if fn := s.opts.OnToolsChanged; fn != nil {
		s.notify.Post(func() { fn(s.life, change) })
	}
}

// Tools returns the model-visible tools of every connected server: servers in config order,
// each server's tools in its listing order. The slice is the caller's.
func (set *Set) Tools() Tools { return slices.Clone(set.view.Load().tools) }

// Servers returns every connected server in config order, including servers whose tools are
// all app-only.
func (set *Set) Servers() []*Server { return slices.Clone(set.view.Load().servers) }

// Failed returns one *ServerError per skipped server, in config order. Each was logged once
// when it failed; one only the token store failed leaves it if a retry starts it (see Set).
func (set *Set) Failed() []*ServerError { return slices.Clone(set.view.Load().failed) }

// Lookup finds a connected server by ID first, then by server hash (Server.Hash), the handle
// MCP Apps frontends use. A hash shared by two servers (one endpoint configured twice) is
// ambiguous: Lookup by it fails; look those servers up by ID.
func (set *Set) Lookup(idOrHash string) (*Server, bool) {
	s, err := set.lookup(idOrHash, idOrHash)
	return s, err == nil
}

func (set *Set) lookup(id, hash string) (*Server, error) {
	return catalog.Find(set.Servers(), id, hash, (*Server).ID, (*Server).Hash)
}

// Proxy serves an MCP App frontend's request (the AG-UI middleware's proxied-request
// contract): the server is looked up by ServerID, then ServerHash; only tools/call,
// resources/read, ping and notifications/message are allowed; tools/call is refused for tools
// whose _meta.ui.visibility excludes "app" and for tools filtered out by config. It returns
// the raw MCP result as JSON. Refusals wrap the apps sentinels (ErrUnknownServer,
// ErrAmbiguousServer, ErrMethodNotAllowed, ErrToolNotAllowed, ErrBadRequest).
func (set *Set) Proxy(ctx context.Context, req apps.ProxyRequest) (json.RawMessage, error) {
	if err := apps.ValidateRequest(req); err != nil {
		return nil, err
	}
	s, err := set.lookup(req.ServerID, req.ServerHash)
	if err != nil {
		return nil, err
	}
	return proxy(ctx, s, req)
}

// ProxyHandler returns an http.Handler serving Proxy as JSON over POST (see apps.NewHandler).
// It answers only requests whose Host is a loopback name and whose browser Origin, if any,
// is a loopback origin, plus those Options.ProxyAccess allows
// (DNS rebinding and cross-site requests). It does no authentication: a host that exposes it
// beyond loopback must add its own.
func (set *Set) ProxyHandler() http.Handler {
	return set.proxyUser(apps.NewHandler(set, &set.proxyAccess))
}

// Close closes every server of the set concurrently: in-flight calls are cancelled and stdio
// processes stopped, including those of servers that failed to start and are still being
// torn down. Bounded in time and idempotent.
func (set *Set) Close() error {
	set.closeOnce.Do(func() {
		set.retries.Stop() // no server joins once it returned
		set.mu.Lock()
		failing, servers := set.failing, set.view.Load().servers
		set.mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() { _ = closeAll(failing) }) // waits for their teardown; their errors are in Failed
		set.closeErr = closeAll(servers)
		wg.Wait()
	})
	return set.closeErr
}
