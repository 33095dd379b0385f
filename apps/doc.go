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
// [Proxier] (bridge.Set) report failures with the sentinel errors of this package, which
// [NewHandler] maps to HTTP status codes.
//
// # In the bridge
//
// Package bridge applies this package to every server it connects:
//
//   - The client advertises capabilities.extensions["io.modelcontextprotocol/ui"] (turn off
//     with bridge.Options.DisableAppsExtension).
//   - Tools whose _meta.ui.visibility lacks "model" are not given to the model; they stay
//     callable by the App through the proxy. Tools whose visibility lacks "app" are refused to
//     the App. Malformed UI metadata never fails a listing.
//   - Frontends refer to a server by bridge.Server.Hash, never its URL: for HTTP and SSE
//     servers the same value as @ag-ui/mcp-apps-middleware's getServerHash (MD5 of
//     JSON.stringify({type,url}), byte-compatible escaping); for stdio servers MD5 of
//     {"type":"stdio","command":…,"args":[…]}.
//   - bridge.Set.Lookup(idOrHash) finds a server by ID, then by hash (an ambiguous hash fails).
//   - bridge.Set.Proxy(ctx, ProxyRequest{ServerID, ServerHash, Method, Params}) serves the
//     App's tools/call, resources/read, ping and notifications/message, returning the raw MCP
//     result; bridge.Set.ProxyHandler (or NewHandler(set, nil)) serves it as JSON over POST (400 bad
//     request, 403 refused, 404 unknown server, 409 ambiguous hash). An App is as untrusted as
//     a model: its tools/call arguments are validated the same way (400 when they do not
//     match).
//   - The proxy handler answers loopback only. Mounted on a local port it is reachable from
//     every page the user's browser opens, so it refuses (403) a Host that is not a loopback
//     name (DNS rebinding) and a browser Origin that is not a loopback origin (cross-site
//     requests, "null" from sandboxed frames). A HandlerOptions allows more: the second
//     argument of NewHandler, or bridge.Options.ProxyAccess. It does no authentication: a
//     host that exposes it beyond loopback, or on a machine with other users, must put its own
//     authentication in front.
//   - bridge.Server.ReadResource fetches ui:// HTML (text or blob);
//     bridge.Options.UIResourceCacheTTL keeps a small per-server cache of them.
//   - bridge.Options.OnAppResult receives {result, resourceUri, serverHash, serverId,
//     toolInput} after each App tool call — the activity the CopilotKit MCP Apps renderer
//     reads.
//
// A web host that renders Views (the sandbox, its Content-Security-Policy, the ui/* messages)
// is described, as built for mcpbridge serve, in command mcpbridge and package internal/serve.
//
// The package holds no mutable state; everything in it is safe for concurrent use.
package apps
