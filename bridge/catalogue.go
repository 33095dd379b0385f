package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/session"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// The catalogue: what a server listed (every tools/list page, the raw bytes the transport
// captured), what the bridge derived from it (schemas, validators, MCP Apps metadata,
// problems), and the named Tools the model sees. Fields are guarded by Server.catMu.

// remoteTool is one tool as the server listed it, with what the bridge derived from it.
type remoteTool struct {
	name         string
	label        string // `tool "<name>"`, for errors (built once, not per call)
	tool         *mcp.Tool
	schema       json.RawMessage // inputSchema as sent (plus the properties:{} fix)
	meta         json.RawMessage
	outputSchema json.RawMessage
	validator    *schemaguard.Schema // nil: validation off for this tool
	outValidator *schemaguard.Schema
	ui           apps.ToolUI
	gone         bool                    // the server stopped offering it after a redial
	taskSupport  string                  // execution.taskSupport as listed: "required", "optional", "forbidden" or ""
	nulls        *schemaguard.NullPolicy // which null arguments the Handler drops
}

// newRemoteTool keeps of t only what calls and Tool records read: go-sdk's decoded
// inputSchema, outputSchema and _meta (maps several times the size of their JSON) are
// dropped, since the bridge keeps the raw bytes instead.
func newRemoteTool(t *mcp.Tool) *remoteTool {
	slim := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations, Icons: t.Icons}
	return &remoteTool{name: t.Name, label: fmt.Sprintf("tool %q", t.Name), tool: slim, nulls: &schemaguard.NullPolicy{}}
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

// rawTool is the tool name for a raw call (Server.CallTool): the listed one, or for a tool
// not in the listing (filtered, or new) one that only names it, so the server still answers.
func (s *Server) rawTool(name string) *remoteTool {
	if rt, err := s.remoteTool(name); err == nil {
		return rt
	}
	return newRemoteTool(&mcp.Tool{Name: name})
}

// retryable reports whether a call that may have reached the server can be sent again.
func (rt *remoteTool) retryable() bool {
	a := rt.tool.Annotations
	return a != nil && (a.ReadOnlyHint || a.IdempotentHint)
}

// list fetches every tools/list page and the raw tool objects the transport captured, for
// the shared catalogue: none once the server's catalogue is per user (users_catalogue.go).
func (s *Server) list(ctx context.Context, sess *session.Session) ([]*mcp.Tool, map[string]json.RawMessage, error) {
	if s.pool.PrivateCatalogues() {
		return nil, nil, nil
	}
	listed, raw, li, err := s.listPages(ctx, sess)
	return s.sharedListing(listed, raw, li, err)
}

// listPages fetches every tools/list page on sess and the raw tool objects the transport
// captured, and what the pages said about caching them.
func (s *Server) listPages(ctx context.Context, sess *session.Session) ([]*mcp.Tool, map[string]json.RawMessage, listInfo, error) {
	l, err := catalog.List(ctx, s.pool, sess, catalog.Limits{MaxTools: s.opts.MaxListTools, MaxBytes: s.opts.MaxListBytes, MaxPages: maxListPages})
	return l.Tools, l.Raw, l.Info, err
}

// convert derives remote tools from a listing. It returns them by name, the names offered to
// the model in listing order, the app-only names, and problems found.
//
// Schemas are measured against the budgets the first time their bytes are seen, and compiled
// while ctx allows (later ones compile on first use).
func (s *Server) convert(ctx context.Context, caps taskCaps, tools []*mcp.Tool, raw map[string]json.RawMessage) (map[string]*remoteTool, []string, []string, []ToolProblem) {
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
		schema, err := schemaguard.CheckSchema(parts.InputSchema)
		if err != nil {
			problem(t.Name, err.Error(), true)
			continue
		}
		if fixed, ok := schemaguard.ValidUTF8(schema); !ok {
			schema = fixed
			problem(t.Name, "inputSchema is not valid UTF-8: invalid bytes replaced with U+FFFD in Parameters", false)
		}
		if parts.Execution.TaskSupport == "required" {
			// A plain tools/call is refused by the server; offering it would only fail.
			if why := s.tasks.RequiredProblem(caps); why != "" {
				problem(t.Name, why, true)
				continue
			}
		}
		rt := newRemoteTool(t)
		if d, ok := catalog.CapDescription(rt.tool.Description, s.opts.MaxDescriptionBytes); !ok {
			rt.tool.Description = d
			problem(t.Name, fmt.Sprintf("description is %d bytes, over Options.MaxDescriptionBytes (%d): cut", len(t.Description), s.opts.MaxDescriptionBytes), false)
		}
		rt.taskSupport = parts.Execution.TaskSupport
		rt.schema, rt.meta, rt.outputSchema = schema, parts.Meta, parts.OutputSchema
		var uiProblems []string
		rt.ui, uiProblems = apps.ParseToolUI(t.Meta)
		for _, p := range uiProblems {
			problem(t.Name, "MCP Apps metadata: "+p, false)
		}
		if !s.opts.DisableValidation {
			var p string
			if rt.validator, p = schemaOf(ctx, s, schema, "inputSchema"); p != "" {
				problem(t.Name, p, false)
			}
			if len(parts.OutputSchema) > 0 {
				if rt.outValidator, p = schemaOf(ctx, s, parts.OutputSchema, "outputSchema"); p != "" {
					problem(t.Name, p, false)
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
			problem(name, catalog.DroppedBySDK(raw[name]), true)
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

// wanted applies the server's Include and Exclude globs to a tool name.
func (s *Server) wanted(name string) bool {
	return catalog.Selected(s.cfg.Include, s.cfg.Exclude, name)
}

// install makes sess the live session with a fresh listing. Tools named before keep their
// names; tools no longer listed are marked gone.
func (s *Server) install(ctx context.Context, sess *session.Session, listed []*mcp.Tool, raw map[string]json.RawMessage) {
	s.apply(ctx, sess, nil, listed, raw)
}

// apply converts a listing and makes it the server's, with sess as the live session. When
// onlyIf is set, the listing is applied only while onlyIf is still the live session (a
// re-list after tools/list_changed must not undo a redial that happened meanwhile). It
// returns the server's tool names that appeared and disappeared, and whether it applied.
func (s *Server) apply(ctx context.Context, sess, onlyIf *session.Session, listed []*mcp.Tool, raw map[string]json.RawMessage) (added, removed []string, ok bool) {
	s.schemas.Begin()
	remote, model, appOnly, problems := s.convert(ctx, sess.Caps, listed, raw)
	s.schemas.End()
	catalog.Release(listed, raw)
	var later logLater
	defer later.flush()
	// The session and its listing are installed together (the pool's lock, then catMu).
	ok = s.pool.Install(sess, onlyIf, func() {
		s.catMu.Lock()
		defer s.catMu.Unlock()
		// A remoteTool never changes after it is published in s.remote: calls read it without a
		// lock once they have it. A tool that disappears is replaced by a copy marked gone; one
		// listed again as it was stays the same remoteTool (and bytes), so that a re-listing
		// that finds nothing changed holds no second copy of the catalogue.
		for name, rt := range remote {
			old := s.remote[name]
			switch {
			case old == nil || old.gone:
				added = append(added, rt.name)
			case sameTool(old, rt):
				remote[name] = old
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
		s.uiCache.Clear()
		s.status.AppOnly = appOnly
		s.status.TaskTools = taskTools(remote)
		// Warn once per problem: a redial lists the same tools again.
		for _, p := range problems {
			if slices.Contains(s.status.Problems, p) {
				continue
			}
			if p.Skipped {
				later.warn(s.log, "tool skipped", "tool", p.Tool, "problem", p.Problem)
			} else {
				later.warn(s.log, "tool problem", "tool", p.Tool, "problem", p.Problem)
			}
		}
		s.status.Problems = problems
		if s.tools == nil {
			s.status.ModelTools = model
		}
	})
	if !ok {
		return nil, nil, false
	}
	return added, removed, true
}

// sameTool reports whether b, from a new listing, is a as it was listed before.
func sameTool(a, b *remoteTool) bool {
	return bytes.Equal(a.schema, b.schema) && bytes.Equal(a.meta, b.meta) &&
		bytes.Equal(a.outputSchema, b.outputSchema) && a.taskSupport == b.taskSupport &&
		a.validator == b.validator && a.outValidator == b.outValidator &&
		reflect.DeepEqual(a.tool, b.tool) && reflect.DeepEqual(a.ui, b.ui)
}

// build names the server's model-visible tools with n (in listing order), keeps them as the
// server's tools, logs renames and returns the tools.
func (s *Server) build(n *catalog.Namer) Tools {
	caps := serverCaps(s) // before catMu: lock order
	var later logLater
	defer later.flush()
	s.catMu.Lock()
	defer s.catMu.Unlock()
	prefix := s.cfg.Prefix
	if prefix == "" && s.opts.AlwaysPrefix {
		prefix = s.cfg.ID
	}
	tools := make(Tools, 0, len(s.status.ModelTools))
	var renamed []Rename
	for _, remote := range s.status.ModelTools {
		rt := s.remote[remote]
		name, why := n.Assign(s.cfg.ID, prefix, remote)
		if why != "" {
			renamed = append(renamed, Rename{Remote: remote, Name: name, Reason: why})
			later.warn(s.log, "tool renamed", "tool", remote, "name", name, "reason", why)
		}
		tools = append(tools, s.tool(name, rt))
	}
	tools = append(tools, exposedOf(s, n, caps, &later)...)
	tools = append(tools, skillToolsOf(s, n, &later)...)
	s.tools = tools
	s.status.Renamed = renamed
	return tools
}

func (s *Server) tool(name string, rt *remoteTool) Tool {
	t := Tool{
		Name:         name,
		Description:  strings.ToValidUTF8(rt.tool.Description, "\uFFFD"), // see schemaguard.ValidUTF8
		Parameters:   rt.schema,
		Server:       s,
		ServerID:     s.cfg.ID,
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
		return handle(ctx, s, remote, args)
	}
	return t
}

// logLater holds log lines found under a lock, to be written after it is released (see the
// lock order on Server). Deferred flushes run after deferred unlocks registered later.
type logLater []func()

func (l *logLater) warn(log *slog.Logger, msg string, args ...any) {
	*l = append(*l, func() { log.Warn(msg, args...) })
}

func (l *logLater) error(log *slog.Logger, msg string, args ...any) {
	*l = append(*l, func() { log.Error(msg, args...) })
}

func (l *logLater) flush() {
	for _, f := range *l {
		f()
	}
}
