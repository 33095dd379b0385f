package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// proxy serves one validated App request on server s; see Set.Proxy.
func proxy(ctx context.Context, s *Server, req apps.ProxyRequest) (json.RawMessage, error) {
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
		c := &toolCall{s: s, origin: OriginApp, remote: p.Name, in: p.Arguments}
		err := c.run(ctx)
		var d *DeniedError
		if errors.As(err, &d) {
			return nil, fmt.Errorf("%w: %w", apps.ErrToolNotAllowed, d)
		}
		return c.json, err
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
		// The App's text is untrusted and unbounded: only its head is logged.
		attrs := []any{"level", redact.Clip(p.Level, 32), "logger", redact.Clip(p.Logger, 128), "data", redact.Clip(string(p.Data), maxLoggedAppData)}
		if len(p.Data) > maxLoggedAppData {
			attrs = append(attrs, "dataBytes", len(p.Data))
		}
		s.log.Info("message from MCP App", attrs...)
		result = struct{}{}
	}
	out := jsonstr.Marshal(result)
	if out == nil {
		return nil, fmt.Errorf("server %q: %s: the result could not be encoded", s.ID(), req.Method)
	}
	return out, nil
}

// resolveApp is the resolve stage of an App's tools/call (see call.go): the tool must be
// listed and visible to apps, else apps.ErrToolNotAllowed (HTTP 403).
func resolveApp(c *toolCall) error {
	s, name := c.s, c.remote
	rt, err := s.listedTool(c.ctx, name) // the user's catalogue on a per-user one (users_catalogue.go)
	switch {
	case errors.Is(err, ErrUnknownTool) || errors.Is(err, ErrToolGone):
		return final{fmt.Errorf("%w: server %q offers no tool %q", apps.ErrToolNotAllowed, s.ID(), name)}
	case err != nil:
		return named{err}
	case !rt.UI.AppCallable():
		return final{fmt.Errorf("%w: tool %q of server %q is not visible to apps", apps.ErrToolNotAllowed, name, s.ID())}
	}
	c.rt = rt
	return nil
}

// maxLoggedAppData is how much of an App's notifications/message data is logged.
const maxLoggedAppData = 2 << 10
