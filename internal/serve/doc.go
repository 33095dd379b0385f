// Package serve is the web page of `mcpbridge serve`: a local page that lists the servers of
// a bridge.Set and their tools as the model sees them, calls any tool from a form generated
// from its schema (or a JSON editor) and shows what the model reads next to the raw result,
// and renders MCP Apps (io.modelcontextprotocol/ui, specification 2026-01-26) as a web host.
//
// While a call runs the page follows it (Calls): the server's progress and the status of an
// MCP task show as lines under the form, a request for input (a task's input_required, an
// elicitation) becomes a form the user answers, and Stop abandons the call, which cancels
// the task on the server.
//
// Two loopback listeners serve two origins. The page's origin serves the page, its API
// (/api/servers, /api/call, /api/calls/{id}) and the Set's App proxy (/api/proxy,
// bridge.Set.ProxyHandler).
// The sandbox origin serves only the sandbox proxy page that Views are loaded into: the page
// sends it the View's HTML (ui/notifications/sandbox-resource-ready), the sandbox renders it
// in an inner srcdoc frame sandboxed without allow-same-origin, and relays JSON-RPC between
// the two. The sandbox page's Content-Security-Policy header is built on the server from the
// resource's _meta.ui.csp (see [CSP.Policy]: the spec's restrictive default, widened only by
// declared origins of a strict shape) and is inherited by the View's frame, so nothing in
// the View's HTML can loosen it.
//
// The host script (web/host.js) answers ui/initialize with host capabilities and context
// (theme, display mode, container dimensions, locale, the tool), sends nothing before
// ui/notifications/initialized, then the tool input and result; it forwards the View's
// tools/call and resources/read to the proxy by server hash (so the proxy applies the
// visibility rules and an App reaches only its own server), shows ui/open-link,
// ui/message and ui/update-model-context to the user, resizes on size changes, grants
// display modes the View declared, and sends ui/resource-teardown before removing a View.
//
// Safety on a laptop: both listeners bind loopback addresses only. Every request to the page's
// origin needs the per-run token (the printed URL carries it once; it then lives in an
// HttpOnly, SameSite=Strict cookie named after the port), a Host header naming the listener
// (DNS rebinding), and, from browsers, an Origin and Sec-Fetch-Site of the page itself (the
// sandbox's port is another origin and is refused). The page never inserts a server's text
// as HTML: its CSP requires Trusted Types with no policy, so any HTML sink would throw.
//
// The page's files are embedded (go:embed); no build step or bundler is involved.
package serve
