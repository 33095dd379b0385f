package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge/skills"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/expose"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/session"
)

// Skills (Options.Skills; package skills has the wire shapes and the verification). The
// bridge declares io.modelcontextprotocol/skills; at assembly it lists the skills of each
// server that declares the extension (skills/list, metadata only: no file is read); to a
// server that does not, skill:// resources stay ordinary resources (the specification
// forbids taking a resource for a skill by its scheme). A server
// with skills gets two model-visible tools, <prefix>__load_skill ({"skill"}) and
// <prefix>__read_skill_file ({"skill","path"}), always prefixed like the exposed tools:
// they go through observe, BeforeCall, Options.ApproveSkill and AfterCall like any call
// (Call.Method "resources/read"), and return the file verified and wrapped (skills.Wrap),
// or an error naming server, skill and file that the model reads. Server.Skills is the
// library API; SkillsPrompt the index for a system prompt.

// skillsConn is skills.Conn over a server's session pool: each request bounded by the
// call timeout and sent again on a new session if the old one died (all are reads).
type skillsConn struct{ s *Server }

// Request sends skills/list or skills/get.
func (c skillsConn) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, _ := params.(*skills.Params)
	var raw json.RawMessage
	err := c.s.do(ctx, Phase(method), method, true, func(ctx context.Context, sess *session.Session) error {
		var err error
		raw, err = skills.Send(ctx, sess.CS, method, p)
		return err
	})
	return raw, err
}

// ReadResource sends resources/read.
func (c skillsConn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var res *mcp.ReadResourceResult
	err := c.s.do(ctx, PhaseRead, fmt.Sprintf("resource %q", uri), true, func(ctx context.Context, sess *session.Session) error {
		var err error
		res, err = sess.CS.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	return res, err
}

// discoverSkills lists s's skills at assembly (Options.Skills): a failure is a problem of
// the server's (it keeps its tools, without skills), not a failed start.
func discoverSkills(ctx context.Context, s *Server, sess *session.Session) {
	if !s.opts.Skills {
		return
	}
	ir := sess.CS.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return
	}
	if _, offered := ir.Capabilities.Extensions[skills.Extension]; !offered {
		return // skill:// resources are ordinary resources to a host the server did not tell
	}
	cat, err := skills.Discover(ctx, s.cfg.ID, skillsConn{s})
	s.catMu.Lock()
	defer s.catMu.Unlock()
	if err != nil {
		p := ToolProblem{Tool: "skills", Problem: err.Error(), Skipped: true}
		s.status.Problems = append(s.status.Problems, p)
		s.log.Warn("skills skipped", "problem", p.Problem)
		return
	}
	for _, p := range cat.Problems() {
		s.status.Problems = append(s.status.Problems, ToolProblem{Tool: "skill " + p.URI, Problem: p.Problem, Skipped: true})
	}
	s.skills = cat
}

// skillToolsOf builds s's skill tools (none without skills), named with n like the
// exposed tools. The caller holds catMu.
func skillToolsOf(s *Server, n *catalog.Namer, later *catalog.LogLater) Tools {
	if s.skills == nil || len(s.skills.Skills()) == 0 {
		return nil
	}
	prefix := s.cfg.Prefix
	if prefix == "" {
		prefix = s.cfg.ID
	}
	var tools Tools
	for _, spec := range skills.Tools() {
		sch, err := schemaguard.Compile(spec.Schema)
		if err != nil {
			later.Error(s.log, "skill tool schema does not compile", "tool", spec.Stem, "err", err)
			continue
		}
		name, _ := n.Assign(s.cfg.ID, prefix, spec.Stem)
		ann := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
		et := expose.Tool{Stem: spec.Stem, Method: "resources/read", What: "skills", Desc: spec.Desc, Schema: string(spec.Schema)}
		ex := &exposure{tool: et, name: name, schema: sch, annotations: ann, skill: true}
		t := Tool{Name: name, Description: fmt.Sprintf(spec.Desc, s.cfg.ID), Parameters: spec.Schema, Server: s, ServerID: s.cfg.ID,
			RemoteName: et.Method, Annotations: ann, exposed: true}
		t.Handler = func(ctx context.Context, args json.RawMessage) (string, error) {
			c := &toolCall{s: s, origin: OriginHandler, in: args, exposed: ex}
			err := c.run(ctx)
			return c.text, err
		}
		tools = append(tools, t)
	}
	return tools
}

// approveSkill is the stage that asks Options.ApproveSkill before a skill's file is read;
// a refusal is a *DeniedError whose reason the model reads.
func approveSkill(c *toolCall) error {
	approve := c.s.opts.ApproveSkill
	if approve == nil {
		return nil
	}
	sk, ok := c.s.Skills().Lookup(c.input.Skill)
	if !ok {
		return final{c.skillErr(&skills.Error{Server: c.s.cfg.ID, Phase: "load", Skill: c.input.Skill, Err: skills.ErrUnknown})}
	}
	err := approve(c.ctx, skills.Request{Server: c.s.cfg.ID, Skill: sk, Path: c.input.Path})
	if err == nil {
		return nil
	}
	var d *DeniedError
	if !errors.As(err, &d) {
		d = &DeniedError{Reason: err.Error()}
	}
	d = &DeniedError{Tool: c.exposed.name, Reason: d.Reason}
	c.text = d.Error()
	return d
}

// sendSkill is the send stage of a skill tool: the skill's SKILL.md or one file, read and
// verified (package skills), as the call's result.
func sendSkill(c *toolCall) error {
	cat := c.s.Skills()
	var text string
	var err error
	if c.exposed.tool.Stem == skills.LoadTool {
		var l *skills.Loaded
		if l, err = cat.Load(c.ctx, c.input.Skill); err == nil {
			text = l.Text
		}
	} else {
		text, err = cat.ReadFile(c.ctx, c.input.Skill, c.input.Path)
	}
	if err != nil {
		return final{c.skillErr(err)}
	}
	c.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	return nil
}

// skillErr is err as the model reads it too.
func (c *toolCall) skillErr(err error) error {
	c.text = err.Error()
	return err
}

// Skills returns the server's skills as listed at assembly (nil without Options.Skills or
// when the server offers none): list them, Get one's entry, Load one, ReadFile one's file.
func (s *Server) Skills() *skills.Catalog { s.catMu.Lock(); defer s.catMu.Unlock(); return s.skills }

// SkillsPrompt renders the skills of servers as one system-prompt section (skills.Index):
// names and descriptions, at most maxTokens as count measures them (bridge/tokens'
// Counter.Count; nil: an estimate), telling the model to load a skill with its server's
// load_skill tool. "" when no server has skills.
//
//	system += bridge.InstructionsPrompt(set.Servers()) + bridge.SkillsPrompt(set.Servers(), tokens.New().Count, 1500)
func SkillsPrompt(servers []*Server, count func(string) int, maxTokens int) string {
	var cats []*skills.Catalog
	for _, s := range servers {
		if s != nil && s.Skills() != nil {
			cats = append(cats, s.Skills())
		}
	}
	return skills.Index(cats, count, maxTokens, skills.LoadTool)
}
