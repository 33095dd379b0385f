package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/ttalk/mcpbridge/apps"
)

// Tools is a set of tools from one or more servers, in a stable order. It is assignable to
// []Tool, so append(agentTools, tools...) works.
type Tools []Tool

// servers returns every distinct server behind the set, including servers of the same
// Connect whose tools are all hidden from the model, in config order.
func (t Tools) servers() []*Server {
	var out []*Server
	seenGroup := map[*group]bool{}
	seen := map[*Server]bool{}
	add := func(s *Server) {
		if s != nil && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, tool := range t {
		s := tool.Server
		if s == nil {
			continue
		}
		if g := s.group; g != nil && !seenGroup[g] {
			seenGroup[g] = true
			for _, gs := range g.servers {
				add(gs)
			}
		}
		add(s)
	}
	return out
}

// Close closes every server behind the set (all servers of the Connect call the tools came
// from), concurrently. It is bounded in time and safe to call more than once.
func (t Tools) Close() error {
	servers := t.servers()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Lookup finds a server behind the set by ID first, then by server hash (Server.Hash), the
// handle frontends use. A hash shared by two servers (same endpoint configured twice) is
// ambiguous: Lookup by it fails; look those servers up by ID.
func (t Tools) Lookup(idOrHash string) (*Server, bool) {
	s, err := t.lookup(idOrHash, idOrHash)
	return s, err == nil
}

func (t Tools) lookup(id, hash string) (*Server, error) {
	servers := t.servers()
	if id != "" {
		for _, s := range servers {
			if s.ID() == id {
				return s, nil
			}
		}
	}
	if hash != "" {
		var found *Server
		for _, s := range servers {
			if s.Hash() == hash {
				if found != nil {
					return nil, fmt.Errorf("%w: hash %q is shared by servers %q and %q; use the server ID", apps.ErrAmbiguousServer, hash, found.ID(), s.ID())
				}
				found = s
			}
		}
		if found != nil {
			return found, nil
		}
	}
	key := id
	if key == "" {
		key = hash
	}
	return nil, fmt.Errorf("%w: %q", apps.ErrUnknownServer, key)
}

// Proxy serves an MCP App frontend's request (the AG-UI middleware's proxied-request
// contract): the server is looked up by ServerID, then ServerHash; only tools/call,
// resources/read, ping and notifications/message are allowed; tools/call is refused for
// tools whose _meta.ui.visibility excludes "app" (and for tools filtered out by config). It
// returns the raw MCP result as JSON. Refusals wrap the apps sentinels (ErrUnknownServer,
// ErrAmbiguousServer, ErrMethodNotAllowed, ErrToolNotAllowed, ErrBadRequest).
func (t Tools) Proxy(ctx context.Context, req apps.ProxyRequest) (json.RawMessage, error) {
	if err := apps.ValidateRequest(req); err != nil {
		return nil, err
	}
	s, err := t.lookup(req.ServerID, req.ServerHash)
	if err != nil {
		return nil, err
	}
	return s.proxy(ctx, req)
}

// ProxyHandler returns an http.Handler serving Proxy as JSON over POST (see apps.NewHandler).
func (t Tools) ProxyHandler() http.Handler { return apps.NewHandler(t) }

func (s *Server) proxy(ctx context.Context, req apps.ProxyRequest) (json.RawMessage, error) {
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	var result any
	switch req.Method {
	case apps.MethodToolsCall:
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(params, &p) // shape checked by ValidateRequest
		s.mu.Lock()
		rt := s.remote[p.Name]
		s.mu.Unlock()
		if rt == nil || rt.gone {
			return nil, fmt.Errorf("%w: server %q offers no tool %q", apps.ErrToolNotAllowed, s.ID(), p.Name)
		}
		if !rt.ui.AppCallable() {
			return nil, fmt.Errorf("%w: tool %q of server %q is not visible to apps", apps.ErrToolNotAllowed, p.Name, s.ID())
		}
		args, err := normalizeArgs(p.Arguments)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", apps.ErrBadRequest, err)
		}
		res, err := s.callTool(ctx, rt, args)
		if err != nil {
			return nil, err
		}
		result = res
	case apps.MethodResourcesRead:
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p) // shape checked by ValidateRequest
		res, err := s.ReadResource(ctx, p.URI)
		if err != nil {
			return nil, err
		}
		result = res
	case apps.MethodPing:
		if err := s.Ping(ctx); err != nil {
			return nil, err
		}
		result = struct{}{}
	case apps.MethodNotificationMessage:
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(params, &p)
		s.log.Info("message from MCP App", "level", p.Level, "logger", p.Logger, "data", string(p.Data))
		result = struct{}{}
	}
	out := marshalNoEscape(result)
	if out == nil {
		return nil, fmt.Errorf("server %q: %s: the result could not be encoded", s.ID(), req.Method)
	}
	return out, nil
}
