package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/ttalk/mcpbridge/bridge/config"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// What ServerConfig.Expose may hold (see bridge/config).
const (
	ExposeResources = config.ExposeResources
	ExposePrompts   = config.ExposePrompts
)

// exposedTool is one synthesized tool: its name stem, MCP method, description and schema.
type exposedTool struct {
	stem, method, what, desc, schema string
}

// exposure is what a call of a tool exposing resources or prompts needs: what the tool
// does, its model-visible name, its compiled argument schema and its annotations (the
// Tool's). Made once per listing.
type exposure struct {
	tool        *exposedTool
	name        string
	schema      *jsonschema.Schema
	annotations *mcp.ToolAnnotations
}

// exposedTools returns the synthesized tools, by what they expose, in the order they are
// offered.
func exposedTools() []exposedTool {
	return []exposedTool{
		{"list_resources", "resources/list", ExposeResources,
			"Lists the resources (files, documents, data) that MCP server %q offers, with their URIs, names and descriptions. Pass nextCursor back as cursor for the next page.",
			`{"type":"object","properties":{"cursor":{"type":"string","description":"nextCursor of the previous page"}},"additionalProperties":false}`},
		{"read_resource", "resources/read", ExposeResources,
			"Reads one resource of MCP server %q by its URI (from list_resources) and returns its contents.",
			`{"type":"object","properties":{"uri":{"type":"string","minLength":1,"description":"the resource's URI"}},"required":["uri"],"additionalProperties":false}`},
		{"list_prompts", "prompts/list", ExposePrompts,
			"Lists the prompt templates that MCP server %q offers, with their arguments. Pass nextCursor back as cursor for the next page.",
			`{"type":"object","properties":{"cursor":{"type":"string","description":"nextCursor of the previous page"}},"additionalProperties":false}`},
		{"get_prompt", "prompts/get", ExposePrompts,
			"Fills in one prompt template of MCP server %q (name from list_prompts) and returns its messages.",
			`{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"the prompt's name"},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"the prompt's arguments by name"}},"required":["name"],"additionalProperties":false}`},
	}
}

// serverCaps returns the capabilities the live session's server announced, or nil.
func serverCaps(s *Server) *mcp.ServerCapabilities {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	if ir := sess.cs.InitializeResult(); ir != nil {
		return ir.Capabilities
	}
	return nil
}

// exposedOf builds the synthesized tools ServerConfig.Expose of s asks for, named with n and
// always prefixed (Prefix, else the server ID) so the model can tell servers apart. caps are
// the server's capabilities (nil: unknown); what it does not offer is a problem, not a tool.
// The caller holds catMu; what is to be logged goes to later.
func exposedOf(s *Server, n *namer, caps *mcp.ServerCapabilities, later *logLater) Tools {
	if len(s.cfg.Expose) == 0 {
		return nil
	}
	prefix := s.cfg.Prefix
	if prefix == "" {
		prefix = s.cfg.ID
	}
	var tools Tools
	for _, et := range exposedTools() {
		if !slices.Contains(s.cfg.Expose, et.what) {
			continue
		}
		if caps != nil && ((et.what == ExposeResources && caps.Resources == nil) || (et.what == ExposePrompts && caps.Prompts == nil)) {
			p := ToolProblem{Tool: et.stem, Problem: fmt.Sprintf("expose: the server does not offer %s", et.what), Skipped: true}
			if !slices.Contains(s.status.Problems, p) {
				s.status.Problems = append(s.status.Problems, p)
				later.warn(s.log, "tool skipped", "tool", p.Tool, "problem", p.Problem)
			}
			continue
		}
		sch, err := schemaguard.Compile(json.RawMessage(et.schema))
		if err != nil { // the schemas are ours: a failure is a bug, not the server's
			later.error(s.log, "exposed tool schema does not compile", "tool", et.stem, "err", err)
			continue
		}
		name, _ := n.assign(s.cfg.ID, prefix, et.stem)
		// All four only read; BeforeCall and AfterCall see the same annotations as the Tool.
		ann := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptrFalse()}
		t := Tool{
			Name:        name,
			Description: fmt.Sprintf(et.desc, s.cfg.ID),
			Parameters:  json.RawMessage(et.schema),
			Server:      s,
			RemoteName:  et.method,
			Annotations: ann,
			exposed:     true,
		}
		ex := &exposure{tool: &et, name: name, schema: sch, annotations: ann}
		t.Handler = func(ctx context.Context, args json.RawMessage) (string, error) {
			c := &toolCall{s: s, origin: OriginHandler, in: args, exposed: ex}
			err := c.run(ctx)
			return c.text, err
		}
		tools = append(tools, t)
	}
	return tools
}

func ptrFalse() *bool { f := false; return &f }

// exposedInput is the arguments of a tool exposing resources or prompts, decoded.
type exposedInput struct {
	Cursor    string            `json:"cursor"`
	URI       string            `json:"uri"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// sendExposed is the send stage of a tool exposing resources or prompts (see call.go): its
// request made with redial (all four are read-only, so a request lost with its session is
// sent again) within the call's deadline, the answer as a tool result the results package
// flattens.
func sendExposed(c *toolCall) error {
	s, ctx, in := c.s, c.ctx, c.input
	var err error
	var res *mcp.CallToolResult
	switch c.exposed.tool.method {
	case "resources/list":
		err = s.doBounded(ctx, true, PhaseListResources, "resources/list", true, func(ctx context.Context, sess *session) error {
			r, err := sess.cs.ListResources(ctx, &mcp.ListResourcesParams{Meta: requestMeta(ctx, s.opts.tel), Cursor: in.Cursor})
			if err != nil {
				return err
			}
			out := map[string]any{"resources": r.Resources}
			if in.Cursor == "" && sess.cs.InitializeResult().Capabilities.Resources != nil {
				// Templates are listed once, with the first page; a server without them may
				// answer "method not found".
				if tr, err := sess.cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Meta: requestMeta(ctx, s.opts.tel)}); err == nil && len(tr.ResourceTemplates) > 0 {
					out["resourceTemplates"] = tr.ResourceTemplates
				}
			}
			if r.NextCursor != "" {
				out["nextCursor"] = r.NextCursor
			}
			res = &mcp.CallToolResult{StructuredContent: out}
			return nil
		})
	case "resources/read":
		err = s.doBounded(ctx, true, PhaseRead, fmt.Sprintf("resource %q", in.URI), true, func(ctx context.Context, sess *session) error {
			r, err := sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: requestMeta(ctx, s.opts.tel), URI: in.URI})
			if err != nil {
				return err
			}
			res = &mcp.CallToolResult{}
			for _, c := range r.Contents {
				if c != nil {
					res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: c})
				}
			}
			return nil
		})
	case "prompts/list":
		err = s.doBounded(ctx, true, PhaseListPrompts, "prompts/list", true, func(ctx context.Context, sess *session) error {
			r, err := sess.cs.ListPrompts(ctx, &mcp.ListPromptsParams{Meta: requestMeta(ctx, s.opts.tel), Cursor: in.Cursor})
			if err != nil {
				return err
			}
			out := map[string]any{"prompts": r.Prompts}
			if r.NextCursor != "" {
				out["nextCursor"] = r.NextCursor
			}
			res = &mcp.CallToolResult{StructuredContent: out}
			return nil
		})
	case "prompts/get":
		err = s.doBounded(ctx, true, PhaseGetPrompt, fmt.Sprintf("prompt %q", in.Name), true, func(ctx context.Context, sess *session) error {
			r, err := sess.cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: requestMeta(ctx, s.opts.tel), Name: in.Name, Arguments: in.Arguments})
			if err != nil {
				return err
			}
			res = promptResult(r)
			return nil
		})
	}
	c.res = res
	return finalErr(err)
}

// promptResult turns a prompt's messages into content blocks the results package flattens:
// the description, then each message as "<role>: " and its content.
func promptResult(r *mcp.GetPromptResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	if r.Description != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: r.Description})
	}
	for _, m := range r.Messages {
		if m == nil || m.Content == nil {
			continue
		}
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(m.Role) + ": " + tc.Text})
			continue
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: string(m.Role) + ":"}, m.Content)
	}
	if len(res.Content) == 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: "(the prompt has no messages)"})
	}
	return res
}
