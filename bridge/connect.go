package bridge

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"
)

// group is the set of servers one Connect opened. Every Tool's Server points into it, so
// Tools.Close and Tools.Lookup reach servers whose tools are all hidden from the model.
type group struct {
	servers []*Server
}

// ConnectServers is Connect with a background context and default Options: it returns the
// tools of every server that could be reached; failures are logged (slog.Default()) and
// skipped. Close the result when done.
func ConnectServers(cfgs []ServerConfig) Tools {
	tools, _ := Connect(context.Background(), cfgs, nil)
	return tools
}

// Connect dials every server concurrently, lists every page of its tools and returns them as
// one set: servers in config order, each server's tools in its tools/list order, whatever
// order the servers answered in. A server that fails is logged once and skipped; the
// returned error is an errors.Join of one *ServerError per skipped server (nil when all
// worked), and the tools of the others are returned with it. When a server marked Required
// fails, Connect closes every server and returns no tools.
//
// ctx bounds start-up only (with each server's ConnectTimeout); the sessions outlive it.
// Close the returned Tools when done. When no server offers the model a single tool, the
// result is empty and Connect closes every server itself, since an empty set could not
// close them (a server whose tools are all app-only is then unreachable for its App too;
// use Dial for such a server on its own).
func Connect(ctx context.Context, cfgs []ServerConfig, opts *Options) (Tools, error) {
	o := resolve(opts)
	g := &group{}
	servers := make([]*Server, len(cfgs))
	errs := make([]error, len(cfgs))
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		if err := checkID(cfg, seen, i); err != nil {
			serr := &ServerError{Server: cfg.ID, Phase: PhaseConfig, Err: err}
			errs[i] = serr
			o.logger.Warn("mcp server skipped", "server", cfg.ID, "phase", serr.Phase, "err", err)
			if o.OnStatus != nil {
				o.OnStatus(ServerStatus{ID: cfg.ID, Err: serr})
			}
			continue
		}
		wg.Go(func() {
			s, err := dial(ctx, cfg, o, g)
			if err != nil {
				errs[i] = err
				return
			}
			servers[i] = s
		})
	}
	wg.Wait()

	for i, cfg := range cfgs {
		if cfg.Required && errs[i] != nil {
			closeAll(servers)
			return nil, fmt.Errorf("required server %q failed: %w", cfg.ID, errors.Join(errs...))
		}
	}
	n := newNamer()
	var tools Tools
	for _, s := range servers {
		if s == nil {
			continue
		}
		g.servers = append(g.servers, s)
		tools = append(tools, s.build(n, true)...)
	}
	if len(tools) == 0 && len(g.servers) > 0 {
		o.logger.Warn("no server offered a model-visible tool; closing them")
		closeAll(g.servers)
	}
	return tools, errors.Join(errs...)
}

func checkID(cfg ServerConfig, seen map[string]int, i int) error {
	if cfg.ID == "" {
		return fmt.Errorf("server #%d has no ID", i+1)
	}
	if j, dup := seen[cfg.ID]; dup {
		return fmt.Errorf("duplicate server ID %q (servers #%d and #%d)", cfg.ID, j+1, i+1)
	}
	seen[cfg.ID] = i
	for _, pats := range [][]string{cfg.Include, cfg.Exclude} {
		if _, err := matchAnyErr(pats, ""); err != nil {
			return err
		}
	}
	return nil
}

func closeAll(servers []*Server) {
	var wg sync.WaitGroup
	for _, s := range servers {
		if s != nil {
			wg.Go(func() { _ = s.Close() })
		}
	}
	wg.Wait()
}

// Dial connects to one server and lists its tools, which keep their names unless invalid
// (or Prefix/AlwaysPrefix asks for a prefix). ctx bounds start-up only. Close the Server
// when done.
func Dial(ctx context.Context, cfg ServerConfig, opts *Options) (*Server, error) {
	o := resolve(opts)
	if err := checkID(cfg, map[string]int{}, 0); err != nil {
		return nil, &ServerError{Server: cfg.ID, Phase: PhaseConfig, Err: err}
	}
	g := &group{}
	s, err := dial(ctx, cfg, o, g)
	if err != nil {
		return nil, err
	}
	g.servers = []*Server{s}
	s.build(newNamer(), true)
	return s, nil
}

// dial starts one server and lists its tools, reporting the outcome to the log and OnStatus.
func dial(ctx context.Context, cfg ServerConfig, o *options, g *group) (*Server, error) {
	s := newServer(cfg, o, g)
	ctx, cancel := context.WithTimeout(ctx, o.connectTimeout(cfg))
	defer cancel()
	fail := func(serr *ServerError, timings []PhaseTiming) (*Server, error) {
		s.stop()
		s.mu.Lock()
		s.status.Err = serr
		s.status.Timings = timings
		s.status.Stderr = serr.Stderr
		st := s.status
		s.mu.Unlock()
		attrs := []any{"phase", serr.Phase, "err", serr.Err}
		if serr.Stderr != "" {
			attrs = append(attrs, "stderr", tail(serr.Stderr))
		}
		o.logger.Warn("mcp server skipped", append([]any{"server", cfg.ID}, attrs...)...)
		if o.OnStatus != nil {
			o.OnStatus(st)
		}
		return nil, serr
	}
	sess, initTiming, serr := s.open(ctx)
	if serr != nil {
		return fail(serr, nil)
	}
	timings := []PhaseTiming{initTiming}
	t := time.Now()
	listed, raw, err := s.list(ctx, sess)
	timings = append(timings, PhaseTiming{PhaseList, time.Since(t)})
	if err != nil {
		s.closeWithin(ctx, sess)
		return fail(s.serverError(PhaseList, err, sess.conn), timings)
	}
	s.install(sess, listed, raw)
	s.mu.Lock()
	s.lastDial = time.Now()
	s.status.Timings = timings
	transport, visible := s.status.Transport, len(s.pending)
	s.mu.Unlock()
	s.log.Debug("mcp server connected", "tools", visible, "transport", transport)
	if o.OnStatus != nil {
		st := s.Status()
		st.Tools = s.build(newNamer(), false)
		o.OnStatus(st)
	}
	return s, nil
}

func matchAny(patterns []string, name string) bool {
	ok, _ := matchAnyErr(patterns, name)
	return ok
}

func matchAnyErr(patterns []string, name string) (bool, error) {
	for _, p := range patterns {
		ok, err := path.Match(p, name)
		if err != nil {
			return false, fmt.Errorf("bad tool filter pattern %q: %w", p, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
