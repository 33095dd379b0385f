package apps

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"strconv"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// ExtensionID is the MCP Apps extension identifier, the key under which a client advertises
// support in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/ui"

// ResourceMIMEType is the MIME type of an MCP Apps UI resource (an HTML5 document).
const ResourceMIMEType = "text/html;profile=mcp-app"

// URIScheme is the prefix every MCP Apps UI resource URI starts with.
const URIScheme = "ui://"

// ClientCapability returns the settings to advertise under
// capabilities.extensions[ExtensionID]: {"mimeTypes":["text/html;profile=mcp-app"]}.
// Each call returns a new map, so the caller may hand it to
// [mcp.ClientCapabilities.AddExtension] without sharing it:
//
//	caps.AddExtension(apps.ExtensionID, apps.ClientCapability())
func ClientCapability() map[string]any {
	return map[string]any{"mimeTypes": []string{ResourceMIMEType}}
}

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

// Proxy methods a View may have the host forward to its MCP server (MCP Apps 2026-01-26,
// and exactly the allow-list of the AG-UI middleware).
const (
	MethodToolsCall           = "tools/call"
	MethodResourcesRead       = "resources/read"
	MethodPing                = "ping"
	MethodNotificationMessage = "notifications/message"
)

// MethodAllowed reports whether method may pass the frontend proxy: only tools/call,
// resources/read, ping and notifications/message do. The comparison is exact
// (case-sensitive), as JSON-RPC method names are.
func MethodAllowed(method string) bool {
	switch method {
	case MethodToolsCall, MethodResourcesRead, MethodPing, MethodNotificationMessage:
		return true
	}
	return false
}

// Sentinel errors of the proxy contract. A [Proxier] wraps them (fmt.Errorf("%w: ...")) so
// callers and [NewHandler] can tell the cases apart with errors.Is.
var (
	// ErrUnknownServer: no server has the requested ID or hash.
	ErrUnknownServer = errors.New("unknown server")
	// ErrAmbiguousServer: several servers share the requested hash; the frontend must
	// name the server by ID.
	ErrAmbiguousServer = errors.New("ambiguous server hash: several servers share it, use serverId")
	// ErrMethodNotAllowed: the method is not one [MethodAllowed] accepts.
	ErrMethodNotAllowed = errors.New("method not allowed for UI proxy")
	// ErrToolNotAllowed: the tool does not exist on the server or its visibility excludes
	// "app", so an App may not call it.
	ErrToolNotAllowed = errors.New("tool not callable by apps")
	// ErrBadRequest: the request is malformed (missing method or server reference,
	// params that are not what the method needs).
	ErrBadRequest = errors.New("bad proxy request")
)

// maxQuoted caps how much of an untrusted string is quoted into an error or problem text.
const maxQuoted = 120

// quote returns s quoted with %q, cut to maxQuoted bytes on a rune boundary; the cut is
// marked after the closing quote, so the quoted part is exactly the server's bytes.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(redact.ClipMark(s, maxQuoted, "")) + redact.Ellipsis
}

// ValidateRequest checks the parts of req that do not depend on which servers exist: the
// method is present and allowed, the server is named by ID or hash, params (when present)
// are a JSON object, and tools/call and resources/read params carry a non-empty string
// "name" or "uri". It returns nil or an error wrapping [ErrBadRequest] or
// [ErrMethodNotAllowed]. [NewHandler] calls it before the [Proxier]; a Proxier should
// call it too, since it may be reached without the handler.
func ValidateRequest(req ProxyRequest) error {
	if req.Method == "" {
		return fmt.Errorf("%w: missing method", ErrBadRequest)
	}
	if !MethodAllowed(req.Method) {
		return fmt.Errorf("%w: %s", ErrMethodNotAllowed, quote(req.Method))
	}
	if req.ServerID == "" && req.ServerHash == "" {
		return fmt.Errorf("%w: missing serverId and serverHash", ErrBadRequest)
	}
	var params map[string]json.RawMessage
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			return fmt.Errorf("%w: params of %s are not a JSON object", ErrBadRequest, req.Method)
		}
	}
	switch req.Method {
	case MethodToolsCall:
		_, err := stringParam(req.Method, params, "name")
		return err
	case MethodResourcesRead:
		_, err := stringParam(req.Method, params, "uri")
		return err
	}
	return nil
}

// stringParam returns params[key] as a non-empty string, or an ErrBadRequest error.
func stringParam(method string, params map[string]json.RawMessage, key string) (string, error) {
	raw, ok := params[key]
	if !ok {
		return "", fmt.Errorf("%w: %s needs params.%s", ErrBadRequest, method, key)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: params.%s of %s is not a string", ErrBadRequest, key, method)
	}
	if s == "" {
		return "", fmt.Errorf("%w: params.%s of %s is empty", ErrBadRequest, key, method)
	}
	return s, nil
}
