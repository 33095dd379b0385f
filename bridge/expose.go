package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/expose"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/session"
)

// What ServerConfig.Expose may hold (see bridge/config). Tools are all a model sees, so a
// server's resources and prompts are offered as tools when its config asks (off by default,
// so existing tool lists do not change): a server "docs" then gets docs__list_resources
// ({"cursor"?}: resources and resource templates as JSON), docs__read_resource ({"uri"}: text
// contents; binary contents as placeholders), docs__list_prompts and docs__get_prompt
// ({"name", "arguments"?}: the messages as "role: text" lines). They are always prefixed
// (with the server's Prefix, else its ID), validate their arguments like any tool, are
// annotated read-only, pass through BeforeCall, AfterCall and tracing (Call.Method says which
// request), and are left out, with a warning, when the server does not announce the
// capability.
const (
	ExposeResources = config.ExposeResources
	ExposePrompts   = config.ExposePrompts
)

// serverCaps returns the capabilities the live session's server announced, or nil.
func serverCaps(s *Server) *mcp.ServerCapabilities {
	sess := s.pool.Current()
	if sess == nil {
		return nil
	}
	if ir := sess.CS.InitializeResult(); ir != nil {
		return ir.Capabilities
	}
	return nil
}

// exposure is what a call of a tool exposing resources or prompts needs: the tool
// (internal/expose), its model-visible name, its compiled argument schema and its
// annotations (the Tool's). Made once per listing.
type exposure struct {
	tool        expose.Tool
	name        string
	schema      *schemaguard.Compiled
	annotations *mcp.ToolAnnotations
	skill       bool // a skill tool (skills.go): approveSkill and sendSkill
}

// exposedOf builds the synthesized tools ServerConfig.Expose of s asks for, named with n and
// always prefixed (Prefix, else the server ID) so the model can tell servers apart. caps are
// the server's capabilities (nil: unknown); what it does not offer is a problem, not a tool.
// The caller holds catMu; what is to be logged goes to later.
func exposedOf(s *Server, n *catalog.Namer, caps *mcp.ServerCapabilities, later *catalog.LogLater) Tools {
	if len(s.cfg.Expose) == 0 {
		return nil
	}
	prefix := s.cfg.Prefix
	if prefix == "" {
		prefix = s.cfg.ID
	}
	var tools Tools
	for _, et := range expose.Tools() {
		if !slices.Contains(s.cfg.Expose, et.What) {
			continue
		}
		if !expose.Offered(caps, et.What) {
			p := ToolProblem{Tool: et.Stem, Problem: fmt.Sprintf("expose: the server does not offer %s", et.What), Skipped: true}
			if !slices.Contains(s.status.Problems, p) {
				s.status.Problems = append(s.status.Problems, p)
				later.Warn(s.log, "tool skipped", "tool", p.Tool, "problem", p.Problem)
			}
			continue
		}
		sch, err := schemaguard.Compile(json.RawMessage(et.Schema))
		if err != nil { // the schemas are ours: a failure is a bug, not the server's
			later.Error(s.log, "exposed tool schema does not compile", "tool", et.Stem, "err", err)
			continue
		}
		name, _ := n.Assign(s.cfg.ID, prefix, et.Stem)
		// All four only read; BeforeCall and AfterCall see the same annotations as the Tool.
		ann := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
		t := Tool{
			Name:        name,
			Description: fmt.Sprintf(et.Desc, s.cfg.ID),
			Parameters:  json.RawMessage(et.Schema),
			Server:      s,
			ServerID:    s.cfg.ID,
			RemoteName:  et.Method,
			Annotations: ann,
			exposed:     true,
		}
		ex := &exposure{tool: et, name: name, schema: sch, annotations: ann}
		t.Handler = func(ctx context.Context, args json.RawMessage) (string, error) {
			c := &toolCall{s: s, origin: OriginHandler, in: args, exposed: ex}
			err := c.run(ctx)
			return c.text, err
		}
		tools = append(tools, t)
	}
	return tools
}

// sendExposed is the send stage of a tool exposing resources or prompts (see call.go): its
// request (internal/expose) made with redial (all four only read, so a request lost with
// its session is sent again) within the call's deadline.
func sendExposed(c *toolCall) error {
	s, method := c.s, c.exposed.tool.Method
	// The Phase of an exposed tool's request is its method: PhaseListResources, PhaseRead,
	// PhaseListPrompts or PhaseGetPrompt.
	req := session.Request{Phase: method, What: expose.Target(method, c.input), Retryable: true, Timeout: c.timeout}
	err := s.request(c.ctx, true, req, func(ctx context.Context, sess *session.Session) error {
		var err error
		c.res, err = expose.Request(ctx, sess.CS, method, c.input, func() map[string]any { return s.opts.tel.RequestMeta(ctx) })
		return err
	})
	return finalErr(err)
}
