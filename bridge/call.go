package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/results"
)

// invoke is a Tool's Handler: arguments checked and validated, tools/call with redial,
// result flattened.
func (s *Server) invoke(ctx context.Context, remote string, args json.RawMessage) (string, error) {
	inv, err := s.invokeFull(ctx, remote, args)
	return inv.Text, err
}

// invokeFull is invoke keeping what went in and what came back (see Tool.Invoke). With hooks
// or telemetry the call is observed (see hooks.go).
func (s *Server) invokeFull(ctx context.Context, remote string, args json.RawMessage) (Invocation, error) {
	if !s.opts.observed() {
		return s.invokeWith(ctx, nil, remote, args)
	}
	ctx, ob := s.observe(ctx, OriginHandler, "tools/call", remote, args)
	inv, err := s.invokeWith(ctx, ob, remote, args)
	ob.end(ctx, len(inv.Text), false, err)
	return inv, err
}

// invokeWith is invokeFull, observed by ob unless it is nil.
func (s *Server) invokeWith(ctx context.Context, ob *callObs, remote string, args json.RawMessage) (Invocation, error) {
	rt, err := s.remoteTool(remote)
	if err != nil {
		return Invocation{}, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: err}
	}
	// Our own work (validation) counts against the call's deadline like the server's.
	ctx, cancel := context.WithTimeout(ctx, s.opts.callTimeout(s.cfg))
	defer cancel()
	a, err := normalizeArgs(args)
	if err == nil {
		var dropped []string
		if a, dropped = dropNulls(rt, a); len(dropped) > 0 {
			s.log.Debug("null arguments for optional properties dropped", "tool", rt.name, "properties", dropped)
		}
		err = s.validateArgs(ctx, rt, a)
	}
	if err != nil {
		return Invocation{}, &ServerError{Server: s.cfg.ID, Phase: PhaseCall, Err: fmt.Errorf("%s: %w", rt.label, err)}
	}
	inv := Invocation{Args: a}
	if ob != nil {
		ob.describe(rt, a)
		if err := ob.before(ctx, rt.label); err != nil {
			if d, ok := err.(*DeniedError); ok {
				inv.Text = d.Error() // what the model reads
				return inv, d
			}
			return inv, err
		}
	}
	res, err := s.callTool(ctx, rt, a)
	if err != nil {
		return inv, err
	}
	inv.Result = res
	if rt.outValidator != nil && res.StructuredContent != nil && !res.IsError {
		s.checkOutput(ctx, rt, res.StructuredContent)
	}
	text, terr := results.Flatten(res, &results.Options{MaxBytes: s.opts.MaxResultBytes, App: rt.ui.ResourceURI != ""})
	inv.Text = text
	if rt.ui.ResourceURI != "" && s.opts.OnAppResult != nil {
		s.opts.OnAppResult(ctx, apps.Activity{
			Result:      res,
			ResourceURI: rt.ui.ResourceURI,
			ServerHash:  s.Hash(),
			ServerID:    s.cfg.ID,
			ToolInput:   a,
		})
	}
	return inv, terr
}

// toSchemaValue converts go-sdk's decoded value (float64 numbers) into what the schema
// validator expects (json.Number), by a round trip.
func toSchemaValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

// remoteTool returns the listed tool name; the error wraps ErrUnknownTool or ErrToolGone.
func (s *Server) remoteTool(name string) (*remoteTool, error) {
	s.catMu.Lock()
	rt := s.remote[name]
	s.catMu.Unlock()
	switch {
	case rt == nil:
		return nil, fmt.Errorf("tool %q: %w", name, ErrUnknownTool)
	case rt.gone:
		return nil, fmt.Errorf("tool %q: %w", name, ErrToolGone)
	}
	return rt, nil
}

func (s *Server) gone(name string) bool {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	rt := s.remote[name]
	return rt != nil && rt.gone
}

// CallTool calls the server's tool `name` (its own name, not the model-visible one) with args
// as given (nil means {}), and returns the raw result: no validation, no flattening. A result
// with IsError is not a Go error. Timeouts and redials work as for a Handler.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	rt, err := s.remoteTool(name)
	if err != nil {
		// Not in the listing (filtered, or new): still let the server answer.
		rt = newRemoteTool(&mcp.Tool{Name: name})
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !s.opts.observed() {
		return s.callTool(ctx, rt, args)
	}
	ctx, ob := s.observe(ctx, OriginCallTool, "tools/call", name, args)
	ob.describe(rt, args)
	var res *mcp.CallToolResult
	if err = ob.before(ctx, rt.label); err == nil {
		res, err = s.callTool(ctx, rt, args)
	}
	ob.end(ctx, resultSize(res), res != nil && res.IsError, err)
	return res, err
}

func (s *Server) callTool(ctx context.Context, rt *remoteTool, args json.RawMessage) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := s.do(ctx, PhaseCall, rt.label, rt.retryable(), func(ctx context.Context, sess *session) error {
		if s.gone(rt.name) {
			return ErrToolGone
		}
		params := &mcp.CallToolParams{Name: rt.name, Arguments: args}
		if meta := s.requestMeta(ctx); meta != nil {
			params.Meta = meta
		}
		sessionStarted(ctx, sess.cs.ID())
		if fn := progressFunc(ctx); fn != nil {
			tok, done := s.progress.register(rt.name, fn)
			defer done()
			params.SetProgressToken(tok)
		}
		var err error
		if directCalls(sess) {
			res, err = sess.conn.CallTool(ctx, params)
		} else {
			res, err = sess.cs.CallTool(ctx, params)
		}
		return err
	})
	return res, err
}

// directCalls reports whether tools/call can go straight over the session's connection
// (transport.Conn.CallTool), which skips go-sdk's per-call decoding and its middleware:
// stdio, in-process or SSE, and a protocol before 2026-07-28 (whose per-request _meta
// go-sdk adds). The bridge installs no sending middleware on its client.
func directCalls(sess *session) bool {
	if !sess.conn.DirectCalls() {
		return false
	}
	ir := sess.cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion < "2026-07-28"
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
		// Teardowns of dead sessions and an interrupted redial finish alongside.
		var wg sync.WaitGroup
		wg.Go(func() { s.waitBackground(sessionClose) })
		if sess != nil {
			if err := sess.close(); err != nil {
				s.closeErr = &ServerError{Server: s.cfg.ID, Phase: PhaseClose, Err: err}
			}
		}
		wg.Wait()
	})
	return s.closeErr
}
