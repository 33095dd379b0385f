// Package expose offers an MCP server's resources and prompts to a model as four read-only
// tools (ServerConfig.Expose): list_resources and read_resource, list_prompts and
// get_prompt. It holds the tools' table (name stem, MCP method, description, argument
// schema), the decoded arguments, and the one request each tool makes, whose answer it
// returns as a tool result that package results flattens. It knows no bridge type: the
// caller names, validates, bounds and retries.
package expose

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server may expose (the values of ServerConfig.Expose).
const (
	Resources = "resources"
	Prompts   = "prompts"
)

// Tool is one synthesized tool.
type Tool struct {
	Stem   string // the name's stem: <prefix>__<stem>
	Method string // the MCP method it makes
	What   string // Resources or Prompts
	Desc   string // its description; %q is the server ID
	Schema string // its argument schema (JSON Schema)
}

// Tools returns the synthesized tools in the order they are offered.
func Tools() []Tool {
	return []Tool{
		{"list_resources", "resources/list", Resources,
			"Lists the resources (files, documents, data) that MCP server %q offers, with their URIs, names and descriptions. Pass nextCursor back as cursor for the next page.",
			`{"type":"object","properties":{"cursor":{"type":"string","description":"nextCursor of the previous page"}},"additionalProperties":false}`},
		{"read_resource", "resources/read", Resources,
			"Reads one resource of MCP server %q by its URI (from list_resources) and returns its contents.",
			`{"type":"object","properties":{"uri":{"type":"string","minLength":1,"description":"the resource's URI"}},"required":["uri"],"additionalProperties":false}`},
		{"list_prompts", "prompts/list", Prompts,
			"Lists the prompt templates that MCP server %q offers, with their arguments. Pass nextCursor back as cursor for the next page.",
			`{"type":"object","properties":{"cursor":{"type":"string","description":"nextCursor of the previous page"}},"additionalProperties":false}`},
		{"get_prompt", "prompts/get", Prompts,
			"Fills in one prompt template of MCP server %q (name from list_prompts) and returns its messages.",
			`{"type":"object","properties":{"name":{"type":"string","minLength":1,"description":"the prompt's name"},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"the prompt's arguments by name"}},"required":["name"],"additionalProperties":false}`},
	}
}

// Offered reports whether a server with caps offers what (Resources or Prompts); nil caps
// (unknown) offer everything.
func Offered(caps *mcp.ServerCapabilities, what string) bool {
	switch {
	case caps == nil:
		return true
	case what == Resources:
		return caps.Resources != nil
	case what == Prompts:
		return caps.Prompts != nil
	}
	return false
}

// Input is a synthesized tool's arguments, decoded.
type Input struct {
	Cursor    string            `json:"cursor"`
	URI       string            `json:"uri"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
	// Skill and Path are the arguments of the bridge's skill tools (bridge/skills.go).
	Skill string `json:"skill"`
	Path  string `json:"path"`
}

// Target names what a request is about, for errors: the method for a listing,
// `resource "<uri>"` or `prompt "<name>"`.
func Target(method string, in Input) string {
	switch method {
	case "resources/read":
		return fmt.Sprintf("resource %q", in.URI)
	case "prompts/get":
		return fmt.Sprintf("prompt %q", in.Name)
	}
	return method
}

// Client is the part of an MCP client session the tools use (*mcp.ClientSession).
type Client interface {
	InitializeResult() *mcp.InitializeResult
	ListResources(context.Context, *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error)
	ListResourceTemplates(context.Context, *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error)
	ReadResource(context.Context, *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error)
	ListPrompts(context.Context, *mcp.ListPromptsParams) (*mcp.ListPromptsResult, error)
	GetPrompt(context.Context, *mcp.GetPromptParams) (*mcp.GetPromptResult, error)
}

// Request makes the request of the tool whose method is method on cl, each request's
// params._meta from meta (nil: none), and returns the answer as a tool result: a listing
// as structuredContent, a resource's contents as embedded resources, a prompt's messages
// as text.
func Request(ctx context.Context, cl Client, method string, in Input, meta func() map[string]any) (*mcp.CallToolResult, error) {
	switch method {
	case "resources/list":
		r, err := cl.ListResources(ctx, &mcp.ListResourcesParams{Meta: meta(), Cursor: in.Cursor})
		if err != nil {
			return nil, err
		}
		out := map[string]any{"resources": r.Resources}
		if in.Cursor == "" && cl.InitializeResult().Capabilities.Resources != nil {
			// Templates are listed once, with the first page; a server without them may
			// answer "method not found".
			if tr, err := cl.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Meta: meta()}); err == nil && len(tr.ResourceTemplates) > 0 {
				out["resourceTemplates"] = tr.ResourceTemplates
			}
		}
		if r.NextCursor != "" {
			out["nextCursor"] = r.NextCursor
		}
		return &mcp.CallToolResult{StructuredContent: out}, nil
	case "resources/read":
		r, err := cl.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta(), URI: in.URI})
		if err != nil {
			return nil, err
		}
		res := &mcp.CallToolResult{}
		for _, c := range r.Contents {
			if c != nil {
				res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: c})
			}
		}
		return res, nil
	case "prompts/list":
		r, err := cl.ListPrompts(ctx, &mcp.ListPromptsParams{Meta: meta(), Cursor: in.Cursor})
		if err != nil {
			return nil, err
		}
		out := map[string]any{"prompts": r.Prompts}
		if r.NextCursor != "" {
			out["nextCursor"] = r.NextCursor
		}
		return &mcp.CallToolResult{StructuredContent: out}, nil
	case "prompts/get":
		r, err := cl.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta(), Name: in.Name, Arguments: in.Arguments})
		if err != nil {
			return nil, err
		}
		return PromptResult(r), nil
	}
	return nil, fmt.Errorf("expose: no tool makes %q", method)
}

// PromptResult turns a prompt's messages into content blocks package results flattens:
// the description, then each message as "<role>: " and its content.
func PromptResult(r *mcp.GetPromptResult) *mcp.CallToolResult {
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
