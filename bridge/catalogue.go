package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/session"
)

// The catalogue: what a server listed (every tools/list page, the raw bytes the transport
// captured), what the bridge derived from it (schemas, validators, MCP Apps metadata,
// problems), and the named Tools the model sees. Fields are guarded by Server.catMu.

// remoteTool returns the listed tool name; the error wraps ErrUnknownTool or ErrToolGone.
func (s *Server) remoteTool(name string) (*catalog.Tool, error) {
	s.catMu.Lock()
	rt := s.remote[name]
	s.catMu.Unlock()
	switch {
	case rt == nil:
		return nil, fmt.Errorf("tool %q: %w", name, ErrUnknownTool)
	case rt.Gone:
		return nil, fmt.Errorf("tool %q: %w", name, ErrToolGone)
	}
	return rt, nil
}

func (s *Server) gone(name string) bool {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	rt := s.remote[name]
	return rt != nil && rt.Gone
}

// rawTool is the tool name for a raw call (Server.CallTool): the listed one, or for a tool
// not in the listing (filtered, or new) one that only names it, so the server still answers.
func (s *Server) rawTool(name string) *catalog.Tool {
	if rt, err := s.remoteTool(name); err == nil {
		return rt
	}
	return catalog.NewTool(&mcp.Tool{Name: name})
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

// convert derives remote tools from a listing (catalog.Converter.Convert) and returns them
// with the problems found.
func (s *Server) convert(ctx context.Context, caps taskCaps, tools []*mcp.Tool, raw map[string]json.RawMessage) (catalog.Converted, []ToolProblem) {
	var problems []ToolProblem
	l := catalog.Converter{
		Include: s.cfg.Include, Exclude: s.cfg.Exclude, MaxDescriptionBytes: s.opts.MaxDescriptionBytes,
		Validate: !s.opts.DisableValidation, Schemas: &s.schemas, Log: s.log,
		Schema: func(ctx context.Context, raw json.RawMessage, what string) (*schemaguard.Schema, string) {
			return schemaOf(ctx, s, raw, what)
		},
		Required: func() string { return s.tasks.RequiredProblem(caps) },
		Problem: func(tool, problem string, skipped bool) {
			problems = append(problems, ToolProblem{Tool: tool, Problem: problem, Skipped: skipped})
		},
	}.Convert(ctx, tools, raw)
	return l, problems
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
	l, problems := s.convert(ctx, sess.Caps, listed, raw)
	var later catalog.LogLater
	defer later.Flush()
	// The session and its listing are installed together (the pool's lock, then catMu).
	ok = s.pool.Install(sess, onlyIf, func() {
		s.catMu.Lock()
		defer s.catMu.Unlock()
		// A published tool never changes (catalog.Tool); catalog.Merge keeps those listed
		// again as they were and marks the others gone.
		added, removed = catalog.Merge(s.remote, l.Remote)
		s.remote = l.Remote
		s.uiCache.Clear()
		s.status.AppOnly = l.AppOnly
		s.status.TaskTools = catalog.TaskTools(l.Remote)
		// Warn once per problem: a redial lists the same tools again.
		for _, p := range problems {
			if slices.Contains(s.status.Problems, p) {
				continue
			}
			if p.Skipped {
				later.Warn(s.log, "tool skipped", "tool", p.Tool, "problem", p.Problem)
			} else {
				later.Warn(s.log, "tool problem", "tool", p.Tool, "problem", p.Problem)
			}
		}
		s.status.Problems = problems
		if s.tools == nil {
			s.status.ModelTools = l.Model
		}
	})
	if !ok {
		return nil, nil, false
	}
	return added, removed, true
}

// build names the server's model-visible tools with n (in listing order), keeps them as the
// server's tools, logs renames and returns the tools.
func (s *Server) build(n *catalog.Namer) Tools {
	caps := serverCaps(s) // before catMu: lock order
	var later catalog.LogLater
	defer later.Flush()
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
			later.Warn(s.log, "tool renamed", "tool", remote, "name", name, "reason", why)
		}
		tools = append(tools, s.tool(name, rt))
	}
	tools = append(tools, exposedOf(s, n, caps, &later)...)
	tools = append(tools, skillToolsOf(s, n, &later)...)
	s.tools = tools
	s.status.Renamed = renamed
	return tools
}

func (s *Server) tool(name string, rt *catalog.Tool) Tool {
	t := Tool{
		Name:         name,
		Description:  strings.ToValidUTF8(rt.Listed.Description, "\uFFFD"), // see schemaguard.ValidUTF8
		Parameters:   rt.Schema,
		Server:       s,
		ServerID:     s.cfg.ID,
		RemoteName:   rt.Name,
		UIResource:   rt.UI.ResourceURI,
		Title:        rt.Listed.Title,
		Annotations:  rt.Listed.Annotations,
		Meta:         rt.Meta,
		OutputSchema: rt.OutputSchema,
	}
	if t.UIResource != "" {
		t.Description += "\n[UI Resource: " + t.UIResource + "]"
	}
	remote := rt.Name
	t.Handler = func(ctx context.Context, args json.RawMessage) (string, error) {
		return handle(ctx, s, remote, args)
	}
	return t
}
