package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ttalk/mcpbridge/apps"
)

// proxy serves one validated App request on this server; see Set.Proxy.
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
		s.catMu.Lock()
		rt := s.remote[p.Name]
		s.catMu.Unlock()
		if rt == nil || rt.gone {
			return nil, fmt.Errorf("%w: server %q offers no tool %q", apps.ErrToolNotAllowed, s.ID(), p.Name)
		}
		if !rt.ui.AppCallable() {
			return nil, fmt.Errorf("%w: tool %q of server %q is not visible to apps", apps.ErrToolNotAllowed, p.Name, s.ID())
		}
		args, err := normalizeArgs(p.Arguments)
		if err == nil {
			// An App is as untrusted as a model: its arguments are validated the same way.
			err = s.validateProxyArgs(ctx, rt, args)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", apps.ErrBadRequest, err)
		}
		if s.opts.observed() {
			return s.appCall(ctx, rt, args)
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
