// Package apps implements the client side of MCP Apps (the io.modelcontextprotocol/ui
// extension, SEP-1865) for mcpbridge: reading a tool's UI metadata, the credential-free
// server hash frontends use to refer to a server, and the contract of the frontend proxy
// through which a rendered App reaches its MCP server.
//
// # Tool metadata
//
// [ParseToolUI] reads a tool's _meta as go-sdk decodes it. A tool is an App tool when it
// names a ui:// resource ([ToolUI.ResourceURI]); its visibility decides whether the model
// sees it ([ToolUI.ModelVisible]) and whether an App may call it ([ToolUI.AppCallable]).
// Malformed metadata never fails: the problems are returned for the caller to log.
//
// # Server hash
//
// [ServerHash] is byte-for-byte compatible with getServerHash in
// @ag-ui/mcp-apps-middleware 0.1.1: the lowercase hex MD5 of JavaScript's
// JSON.stringify({type, url}). [StdioHash] is mcpbridge's own extension for stdio servers,
// which upstream does not support.
//
// # Proxy
//
// A frontend sends a [ProxyRequest] naming a server by ID or hash, a method and its params.
// Only the methods for which [MethodAllowed] reports true may pass. Implementations of
// [Proxier] (bridge.Tools) report failures with the sentinel errors of this package, which
// [NewHandler] maps to HTTP status codes.
//
// The package holds no mutable state; everything in it is safe for concurrent use.
package apps
