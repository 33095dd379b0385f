package apps

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProxyRequest is a frontend's request to reach an MCP server through the backend, the same
// contract as the AG-UI MCP Apps middleware's proxied request. The server is looked up by
// ServerID first, then by ServerHash.
type ProxyRequest struct {
	ServerID   string          `json:"serverId,omitempty"`
	ServerHash string          `json:"serverHash,omitempty"`
	Method     string          `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
}

// Activity is what a frontend's MCP Apps renderer (CopilotKit's "mcp-apps" activity) reads
// after an App tool call: the full result, the UI resource to render, the server by hash and
// ID, and the arguments the tool was called with.
type Activity struct {
	Result      *mcp.CallToolResult `json:"result"`
	ResourceURI string              `json:"resourceUri"`
	ServerHash  string              `json:"serverHash"`
	ServerID    string              `json:"serverId"`
	ToolInput   json.RawMessage     `json:"toolInput"`
}

// ServerHash is a placeholder replaced by the real implementation.
func ServerHash(typ, url string) string { return "" }
