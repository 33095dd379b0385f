// Package bridge turns MCP servers into inline agent tools.
//
// Connect (or ConnectServers) dials every configured server concurrently — local commands over
// stdio, remote Streamable HTTP or legacy SSE endpoints — lists every page of its tools and
// returns them as plain values:
//
//	agent.Tools = append(agent.Tools, bridge.ConnectServers(cfgs)...) // failures logged and skipped
//
// or, with full control:
//
//	set, err := bridge.Connect(ctx, cfgs, opts) // err only when nothing should run
//	if err != nil {
//		return err
//	}
//	defer set.Close()
//	agent.Tools = append(agent.Tools, set.Tools()...)
//
// The Set owns every server it connected (Servers, Failed, Lookup, Proxy, Close).
// Each Tool carries the server's inputSchema byte for byte as Parameters and a Handler that
// validates the model's arguments, calls tools/call and flattens the result into the string
// the model reads (see package results). A server that fails is logged and skipped; the others
// keep working. MCP App tools (package apps) are marked with UIResource, and tools meant only
// for Apps are kept out of the model's list but stay reachable through Set.Proxy.
//
// # Tools
//
// Each Tool is a plain value; json.Marshal(tool) gives {"name","description","parameters"},
// so a list can go to a model API as is (package bridge/provider gives each API its own
// envelope).
//
//   - Name: what the model calls; matches ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (valid for OpenAI,
//     Anthropic and Gemini) and is unique in the set (see Names). Every rename is logged with
//     its reason.
//   - Description: the server's description (invalid UTF-8 replaced by U+FFFD); MCP App tools
//     get "\n[UI Resource: ui://…]" appended.
//   - Parameters: the server's inputSchema, the bytes it sent (key order, big integers, $defs,
//     x- keys kept). Two fixes, because model APIs reject the whole request otherwise: an object
//     schema without "properties" gains "properties":{}, and bytes that are not UTF-8 become
//     U+FFFD (each run of them; reported as a tool problem) — the one exception to byte-exact.
//     A tool whose schema is not a JSON object is skipped with a warning.
//   - Handler: func(ctx, args json.RawMessage) (string, error). Empty, null or "" args become
//     {}; args are validated against the schema (drafts 4 to 2020-12, chosen by $schema;
//     external $refs are refused, never fetched or read); then tools/call; the result is
//     flattened into the text the model reads (package results; capped by
//     Options.MaxResultBytes). Each schema is measured against the schema budgets and compiled
//     at assembly while the connect timeout allows, kept compiled only when large (a compiled
//     schema costs about 20 KB per tool) and compiled again on first use otherwise; a schema
//     that does not compile or is over budget turns validation off for that tool, with a
//     warning (see Hostile servers). Flat schemas (typed properties, required,
//     additionalProperties false, string enums, length and item-count bounds: what most
//     servers list) are checked by a walk over the arguments that only ever accepts; what it
//     does not accept goes to the full validator, whose verdict and message count. Such a
//     small schema is not compiled at assembly, only when a value fails the walk. Safe for
//     concurrent use; ctx cancellation reaches the server.
//   - Server, RemoteName: the connection and the tool's own name on the server.
//   - UIResource: for MCP App tools, the ui:// resource a frontend renders
//     (_meta.ui.resourceUri, or the deprecated flat _meta["ui/resourceUri"]).
//   - Title, Annotations, Meta, OutputSchema: as the server sent them.
//
// A Handler's error tells three cases apart:
//
//	out, err := tool.Handler(ctx, args)
//	var te *results.ToolError
//	switch {
//	case errors.As(err, &te): // the tool itself failed (isError): te.Text is for the model
//	case errors.Is(err, bridge.ErrInvalidArguments): // arguments do not match the schema; server not contacted
//	case err != nil: // transport or protocol failure: a *bridge.ServerError naming server, phase and tool
//	}
//
// WithProgress passes a long-running tool's progress notifications to the caller:
//
//	ctx = bridge.WithProgress(ctx, func(_ context.Context, p bridge.Progress) {
//		ui.Status(fmt.Sprintf("%s: %.0f/%.0f %s", p.Tool, p.Progress, p.Total, p.Message))
//	})
//
// Set.Search(query, k) ranks the set's tools for a task in words, best first (Tools.Search and
// Tools.Index for a subset); package bridge/toolsearch says how, and bridge/provider uses the
// same index for deferred loading. Server.Instructions are each server's own instructions
// (untrusted, escaped, at most MaxInstructionsBytes); InstructionsPrompt(set.Servers()) frames
// them as a system-prompt section that says so. Token counts are in package bridge/tokens,
// which bridge does not import.
//
// A server in the same process (a go-sdk mcp.Server, for tests or embedded tools) is reached
// with ServerConfig{ID: "mem", InProcess: func() (mcp.Transport, error) { … }}, returning one
// end of mcp.NewInMemoryTransports per dial.
//
// # Names
//
// A tool keeps its server name when it matches ^[A-Za-z_][A-Za-z0-9_-]{0,63}$; otherwise
// invalid characters become "_", a leading digit or dash gets a "_" in front, and names over
// 64 bytes are cut with a short stable hash suffix. When two servers offer the same name, the
// later server in config order gets "<serverID>__<name>"; if that still clashes a hash suffix
// is added. Names depend only on the configuration and the servers' tool lists, never on
// which server answered first. RemoteName keeps the server's own name for tools/call.
//
// # Servers
//
// Each ServerConfig is a stdio command (Command, Args, Env added to the parent environment,
// Dir), or a URL with Headers. Type is "stdio", "http" (Streamable HTTP), "sse", or empty:
// inferred from Command or URL, trying Streamable HTTP first and falling back to legacy SSE
// when the endpoint answers like an old SSE server (as the MCP specification describes).
// Servers are usually read from a servers file (see The servers file).
//
//   - Concurrent assembly: all servers are dialled at once; tools come back in config order,
//     each server's tools in its tools/list order (every page). A server that fails or hangs
//     costs the others nothing: it is logged once (ID, phase, cause, stderr tail) and skipped;
//     Set.Failed holds it as a *ServerError{Server, Phase, Err, Stderr}. Connect's own error is
//     only for invalid input (empty or duplicate IDs; nothing is started), a Required server
//     that failed, or a ctx that ended before assembly finished — then every server it started
//     is closed first. Set.Servers includes servers whose tools are all app-only, so their Apps
//     stay reachable.
//   - Timeouts: ConnectTimeout (spawn or dial, initialize and tools/list; default 60s, enough
//     for npx -y cold starts) and CallTimeout (default 60s), per server or in Options; the
//     caller's ctx deadline is always an upper bound; errors name the phase.
//   - Changing tool lists: when a server announces notifications/tools/list_changed, the bridge
//     re-lists it in the background: removed tools fail with a clear error, changed schemas are
//     validated anew, and Options.OnToolsChanged tells the host what was added or removed. The
//     model's tool list itself stays what Connect returned (a changing list would break prompt
//     caches); a host that wants added tools connects again.
//   - Task-only tools: a tool with execution.taskSupport "required" can only run as an MCP
//     task, which the bridge does not drive; it is skipped with a warning (and shown by probe).
//   - Elicitation (Options.OnElicitation): answers a server's request for user input in form or
//     URL mode, including the 2026-07-28 input_required round trips inside a tool call (the
//     call is retried with a new request id and the server's requestState; parallel calls keep
//     theirs apart). Defaults the requested schema declares are filled in for fields the answer
//     leaves out (SEP-1034). Without a handler the bridge does not advertise elicitation; a
//     server that asks anyway gets an "unsupported" error at once, and a call that needs input
//     fails saying so — never a hang.
//   - Null arguments: models send null for optional arguments they leave out (OpenAI's strict
//     mode always does). A top-level null for a property that is not required and whose schema
//     does not accept null is dropped before validation and the call; a null the schema accepts
//     is sent, and one for a required property is an invalid-arguments error.
//   - Processes: stdio servers run in their own process group with stderr always drained (a
//     ring-buffer tail for errors, debug log lines with server=<ID>); Close closes stdin, waits
//     briefly, then sends SIGTERM and SIGKILL to the whole group — no orphans, no zombies, also
//     for npx and sh -c grandchildren. The process is never bound to the connect context.
//   - Secrets: header values, env values, URL user info, query values and bare query keys
//     (https://h/mcp?sk-live-abc) never reach logs, errors or CLI output. ServerConfig masks
//     itself (String, GoString, slog.LogValuer), and the HTTP transport hands the MCP SDK a
//     masked endpoint, restoring the real one only on the wire. Arguments that look like
//     credentials are masked too: the value of --token=X, --api-key X, -H "Authorization: ...",
//     NAME=X with a credential-like name, and URLs in arguments; those values and the values of
//     credential-named env variables (GITHUB_TOKEN, API_KEY, ...) are also masked in a stdio
//     server's stderr as logged and shown. A secret passed as a bare positional argument or
//     after a short flag (-p X) cannot be told apart from an ordinary argument: pass it in env.
//     A secret in a URL's path (https://h/mcp/s/<key>/mcp) is shown.
//
// # Protocol versions
//
// The bridge speaks every version go-sdk v1.8.0 does (2026-07-28, 2025-11-25, 2025-06-18,
// 2025-03-26, 2024-11-05) and negotiates per server: it offers 2026-07-28 through
// server/discover (so the first request already carries MCP-Protocol-Version, the _meta
// protocol version and client info, and the SEP-2243 Mcp-Method and Mcp-Name headers), and
// falls back to initialize with 2025-11-25 when the server does not speak it. Legacy servers
// stay prompt: a discover answered with an error falls back on the same connection at once;
// one that goes unanswered gives up after a quarter of the connect timeout (1 to 10 seconds);
// a stdio server that exits on it is started again with 2025-11-25; a server that needed the
// fallback skips discover on redials. A -32022 "unsupported protocol version" error listing
// the server's versions is retried with the newest version both sides speak; Streamable HTTP
// falls back to legacy SSE only when the endpoint refuses the way an SSE server does (a 400,
// 404 or 405 without a JSON-RPC error body), so other JSON-RPC errors surface as themselves.
//
// ServerConfig.ProtocolVersion (protocolVersion: "2025-11-25" in a servers file) pins a
// version for an odd server. ServerStatus.ProtocolVersion and Negotiation (and mcpbridge
// probe) say which version each server got and how, e.g. "2026-07-28 (server/discover)" or
// "2025-11-25 (initialize after server/discover failed: Method not found (-32601))".
//
// With 2026-07-28, tools whose x-mcp-header markers are invalid are dropped (as the
// specification requires; probe lists them as problems), tool arguments marked with
// x-mcp-header are mirrored into Mcp-Param-* headers, resultType is honoured, multi-round-trip
// results are followed, and tool-list changes arrive through subscriptions/listen as well as
// the older notification. When Connect starts several servers, each opens its
// subscriptions/listen 250 ms after its tools are listed rather than before (so that the
// servers' start-ups do not wait on each other's subscriptions), and the subscription's
// acknowledgement re-lists the server once, so a change made in between is not lost.
// Every request carries the client's capabilities in its _meta;
// a tools/call declares the MCP Apps extension only when it calls an App tool and the tasks
// extension only to a server that offers tasks (the server decodes them on every request;
// the listing and go-sdk's other requests declare both).
//
// # Sessions
//
// A Server holds one MCP session. A dead session (process exit, EOF, HTTP 404 session
// expiry, an oversized frame) is redialled on the next call, one redial shared by concurrent callers, with backoff against
// crash loops. A call that failed because the session died is retried after the redial only
// when it cannot have reached the server or the tool is annotated readOnlyHint or
// idempotentHint; otherwise the error says the tool may have run.
//
// # Around each call
//
// Everything here is off unless the host sets it, and then costs nothing: with no hooks and no
// OpenTelemetry provider a call checks a flag per hook and takes the plain path (BENCHMARKS.md,
// "Hooks and tracing", has the allocations per call with and without them).
//
// Approval: Options.BeforeCall runs before every tool call — a Handler (the model),
// Server.CallTool (host code) or an App's tools/call through Set.Proxy, told apart by
// Call.Origin — after the arguments were checked and validated. It sees the tool (Tool,
// RemoteName, Server, Title, Annotations such as destructiveHint and readOnlyHint) and the
// arguments about to be sent. It returns nil to go ahead, Deny(reason) to refuse (the model
// reads "tool call denied: <reason>"; errors.Is(err, ErrDenied); an App gets a 403), or
// another error to fail the call. A refused call never reaches the server. The hook may block
// to ask a human: its ctx carries the call timeout and ends with the caller's ctx and with
// Close, and the call returns then even if the hook does not.
//
//	opts := &bridge.Options{BeforeCall: func(ctx context.Context, c *bridge.Call) error {
//		if a := c.Annotations; a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint)) {
//			return nil // MCP's default: a tool is destructive unless it says otherwise
//		}
//		if ok, err := askUser(ctx, c.Server.ID(), c.Title, c.Args); err != nil || !ok {
//			return bridge.Deny("the user declined")
//		}
//		return nil
//	}}
//
// Audit: Options.AfterCall runs after every call with a CallEnd: Duration (approval
// included), ArgsBytes, ResultBytes, Outcome ("", tool_error, denied, hook_error,
// invalid_arguments, unknown_tool, tool_gone, timeout, canceled, server_closed, transport, or a
// JSON-RPC error code such as -32602) and Err. Calls refused before reaching the server are
// reported too. ExampleOptions_afterCall prints an audit line per call.
//
// Per-user credentials and _meta: a multi-tenant host shares one session per server but sends
// each user's own credentials with that user's calls:
//
//	ctx = bridge.WithCallHeaders(ctx, http.Header{"Authorization": {"Bearer " + user.Token}})
//	ctx = bridge.WithCallMeta(ctx, map[string]any{"tenant": user.Org}) // into params._meta
//	text, err := tool.Handler(ctx, args)
//
// Per-call headers are added after ServerConfig.Headers (a per-call value wins), only on
// requests to the server's own host and port, and are handled like configured headers: never
// logged, and replaced by *** in any error that quotes them. Headers the MCP transport owns
// (Host, Content-Type, Accept, Mcp-Session-Id and every other Mcp-*) are never replaced;
// stdio servers ignore them.
//
// Filtering tools per agent: Tools.Filter takes the servers file's globs (path.Match; "!"
// excludes). It changes only what an agent is given: an App can still call a tool filtered
// out here when its visibility allows.
//
//	researcher.Tools = set.Tools().Filter("search_*", "fetch", "!*delete*")
//
// Exposing resources and prompts: tools are all a model sees, so a server's resources and
// prompts are offered as tools when its config asks (off by default, so existing tool lists
// do not change): expose: [resources, prompts] in a servers file, or ServerConfig.Expose =
// []string{ExposeResources, ExposePrompts}. A server "docs" then gets docs__list_resources
// ({"cursor"?}: resources and resource templates as JSON), docs__read_resource ({"uri"}: text
// contents; binary contents as placeholders), docs__list_prompts and docs__get_prompt
// ({"name", "arguments"?}: the messages as "role: text" lines). They are always prefixed (with
// the server's Prefix, else its ID), validate their arguments like any tool, are annotated
// read-only, pass through BeforeCall, AfterCall and tracing (Call.Method says which request),
// and are left out, with a warning, when the server does not announce the capability.
//
// # The servers file
//
// LoadConfig reads a servers file: the bridge's own YAML, or the JSON of Claude Desktop,
// Claude Code, Cursor, VS Code, Windsurf, Gemini CLI and mcphost, unchanged. Package
// bridge/config documents the format (dialects, keys and aliases, variables, unknown keys,
// limits); config.Read returns the warnings instead of logging them.
//
// # OAuth
//
// A remote server with an auth block (servers.yaml) or ServerConfig.Auth is authorized with
// OAuth 2.1: the authorization code flow (mcpbridge login once, or Options.Authorizer),
// client credentials, workload identity, enterprise-managed authorization, DPoP-bound
// tokens; tokens are kept in Options.TokenStore (default: a per-user file). Package
// bridge/auth documents the flows, where tokens live and what is never logged; its types
// are aliased here (AuthConfig, TokenStore, ...). Headless by default: a server with no
// usable token is skipped with an error wrapping ErrNeedsLogin.
//
// # Users
//
// A web application has many users, and each authorizes the same remote servers with their
// own account. With Options.Users set, the host names the user of each call with WithUser
// (and of App proxy requests with UserOptions.ProxyUser). For a server with the OAuth
// authorization code flow (auth type oauth) that user's grant, OAuth handler, session (where
// the server keeps one) and catalogue (where the server asks for it) are the user's own:
//
//   - Grants are kept in the TokenStore under a key derived from the server, the client and
//     the user: a hash of length-prefixed fields, so no two users share a key whatever bytes
//     their IDs hold, and the store never holds a user ID in the clear. IDs are opaque bytes,
//     at most MaxUserIDBytes; errors and logs quote them.
//   - Each user's requests carry that user's token only, so a request for user A can only
//     carry A's token: on a stateful server on the user's own session, on a stateless one
//     with the user's own OAuth handler (see Shared and per user below).
//   - A user without a grant gets a *NeedsLoginError (wrapped in a *ServerError, wrapping
//     ErrNeedsLogin) at once, without contacting the server. Its AuthorizationURL starts that
//     user's authorization (discovery, registration, PKCE, state bound to the user and the
//     server; the flow waits UserOptions.LoginTimeout for its callback); the app's OAuth
//     callback at UserOptions.RedirectURL hands the redirect's query to Set.CompleteLogin with
//     the user of its own session (a callback for another user fails and ends the login). The
//     user's next call works; nothing else is reconnected. A refresh token revoked for one
//     user makes that user's calls fail with a *NeedsLoginError; other users are untouched.
//   - A call without a user on such a server is refused, so a forgotten WithUser never
//     borrows the host's grant. Server.ForgetUser logs a user out.
//
// Shared and per user: what the server allows to be shared is shared, the rest is kept per
// user, each user's state bounded per server by UserOptions.MaxSessions (least recently
// used first out) and UserOptions.IdleTimeout, and rebuilt from the stored grant on the
// user's next call.
//
//   - Sessions are per user only where the server keeps state. A Streamable HTTP server
//     that negotiated 2025-11-25 or older holds a session (Mcp-Session-Id) with the token
//     it was opened with: each user gets a session of their own. A server on 2026-07-28 is
//     stateless, and tools are called with one POST each (the direct path): a user's call
//     goes on the shared connection with the user's OAuth handler, which supplies the
//     user's bearer token and refreshes it on a 401; the handler is all the bridge keeps
//     for the user. The few requests of a user there that need go-sdk's session (a call
//     that runs as an MCP task or asks for input, resources/read, prompts) open a session
//     for the user on first need, bounded like the others; listing a user's tools opens
//     one for the listing only.
//   - The catalogue (the tools the model sees) is listed once, when the server is
//     connected, without a user's credentials (with no grant, or the host's), and shared
//     by every user (Set.Tools) unless the server says otherwise: a listing with cacheScope
//     "private" (protocol 2026-07-28, SEP-2549), or a tools/list that needs a user's grant
//     (401 without one), makes the server's catalogue per user for the server's life. A
//     server that refuses even to start without a user's grant is kept too, with no
//     shared session: its catalogue is per user and each user's requests go on the user's
//     own session (on a stateless server as well: there is no shared connection). Such
//     a server offers no tool in Set.Tools; Set.ToolsFor gives a user the shared tools
//     plus each per-user server's listing made with that user's token, cached for the
//     ttlMs the server gave it or until a tools/list_changed (0 or none: listed again on
//     each ToolsFor; calls use the last listing). A user without a grant gets the other
//     tools and a *NeedsLoginError for that server. A per-user tool's Handler calls for
//     the user of its ctx and refuses, wrapping ErrUnknownTool, a user whose own listing
//     has no such tool.
//   - stdio servers stay shared: one process serves every user, since it carries the
//     host's environment and credentials rather than a user's, and a process per user is
//     the cost a multi-user host cannot pay. Servers without auth and client credentials
//     servers (the credentials are the host's) are shared too, catalogue included.
//
// Replicas share grants and logins through a TokenStore that is also a TokenLocker and a
// LoginRelay (bridge/redisstore); package bridge/auth's "Web logins" says how.
//
// Example_users is a web host serving several users against the local test servers;
// ExampleSet_ToolsFor a server whose catalogue is per user.
//
// # Hostile servers
//
// A server is untrusted input: it may send what it likes, as large and as often as it likes,
// and its text ends up on the operator's terminal and in the model's request. Every resource
// it controls is bounded; over a limit, that server (or that tool) loses, never the host.
//
//   - Every size, count, depth and time limit is listed under Limits below: its default,
//     what it bounds, what happens past it and the option that changes it.
//   - Time of our own work in a call (compiling, validating arguments and structuredContent):
//     the call's deadline (ctx or CallTimeout). Over it the call fails with the deadline error;
//     a compile that outlives it finishes in the background and serves the next call. Compile
//     work at Connect: the connect timeout; schemas not compiled in time are compiled on first
//     use.
//   - Re-listing after tools/list_changed: one re-list at a time, coalesced; schemas whose
//     bytes did not change are neither measured nor compiled again.
//   - Control characters in human CLI output and log lines (C0 except newline and tab in text
//     blocks, lone CR, DEL, C1) are always escaped as visible \u00XX; JSON CLI output (--json)
//     is valid JSON with DEL and C1 written as \u escapes.
//   - Invalid UTF-8 in Name, Description and Parameters is replaced by U+FFFD (a tool problem
//     for Parameters), so json.Marshal(tools) is always valid.
//   - App proxy requests: loopback Host and Origin only (403 otherwise; widen with
//     Options.ProxyAccess); App arguments are validated (400).
//
// Descendants that leave the process group: a stdio server's process group is killed at Close
// (and when the server exits), which takes sh -c and npx grandchildren with it. A daemon that
// double-forks and calls setsid leaves the group. Every server is started with
// MCPBRIDGE_SERVER_TAG=<random> in its environment (transport.TagEnv), which descendants
// inherit; on Linux Close finds every process of the same user whose /proc/<pid>/environ
// carries the tag and SIGKILLs it. Not covered: a descendant that clears or rewrites its
// environment before detaching (on any OS), and macOS and Windows, which have no such lookup
// (on Windows the child's own children are not tracked at all). What a host can do: run
// servers under a supervisor that owns the whole tree — on Linux a cgroup (systemd-run --user
// --scope, a container), on macOS a launchd job, on Windows a Job object — or in a container.
// (A child subreaper was rejected: PR_SET_CHILD_SUBREAPER is process-wide, so every orphan of
// every library in the host would become the host's zombie to reap.)
//
// Schemas too deep for go-sdk's decoder: go-sdk v1.8.0 refuses any JSON-RPC message nested
// more than 1,000 levels, before the bridge can look at it. Over Streamable HTTP it fails
// the request at once while decoding the whole answer; on stdio the bridge's line reader
// answers such a response for its request at once with an error saying so (a response
// dropped as noise would leave the request to wait out its timeout). Either way the tools/list
// with a schema nested that deep fails at once, in phase tools/list, and costs the other
// servers nothing. Re-decoding per tool would mean rewriting the message before go-sdk
// reads it, which the bridge does not do.
//
// # Limits
//
// Everything a server, a servers file or a token endpoint controls is bounded; past a limit that
// server (or that tool, or that file) loses, never the host. Every limit (its value, the Options
// or UserOptions field that changes it, what it bounds and what happens past it) is listed in one
// place, generated from the table in limits.go: the doc of [DefaultConnectTimeout] (go doc
// bridge.DefaultConnectTimeout). Options comments name their default's constant.
//
// # Tasks
//
// Some tools run long (research, builds, exports) as MCP tasks: the server answers tools/call
// with a task handle and the client polls for the result. go-sdk has no client support for
// them, so the bridge speaks both versions itself: the experimental tasks of protocol
// 2025-11-25 (a tool whose execution.taskSupport is "required" is called with a "task"
// member, then tasks/get, tasks/result, tasks/cancel) and the 2026-07-28 tasks extension
// (io.modelcontextprotocol/tasks, declared in the client capabilities: the server decides
// per call; tasks/get carries the result, tasks/update answers input). To the model a task
// tool is a tool like any other: the Handler (and Invoke, Server.CallTool, Set.Proxy) runs
// the whole lifecycle and returns the flattened result. It polls at the server's
// pollInterval bounded to 250ms..30s (backing off from 500ms when none is given), reports
// each status change to WithProgress callbacks (Progress.TaskID, Status) and
// Options.OnTaskStatus and as span events, answers input_required through
// Options.OnElicitation (ElicitRequest.TaskID names the task), cancels the task on the
// server (tasks/cancel) when ctx ends or a bound is hit, and is bounded by the task timeout
// (Options.TaskTimeout, default 10 minutes; each request stays bounded by the call timeout)
// and the TTL the server gives. A task that fails, is cancelled, expires or is unknown
// gives a *TaskError (ErrTaskFailed, ErrTaskCancelled, ErrTaskExpired, ErrUnknownTask).
// Everything the server says about a task is untrusted: IDs, states, intervals, messages,
// input requests and results are checked and bounded, and a server that hands out a task ID
// twice or answers about another task is caught. ServerConfig.Tasks (servers.yaml: tasks:
// auto, always, never) says which tools run as tasks; ServerStatus.TaskTools lists them.
//
// Hosts can also detach: Server.StartTask returns as soon as the task exists, and
// PollTask, AwaitTask and CancelTask take its ID later, also from another process after a
// restart for HTTP servers, which keep tasks beyond a session.
//
// # Tracing
//
// The bridge uses the OpenTelemetry API only and records nothing until the host installs a
// provider (Options.TracerProvider and MeterProvider, or the global ones, also after
// Connect). Then each server's start-up gets a "connect <serverID>" span with an event per
// phase, each call a client span "tools/call <tool>" with the semantic conventions' MCP and
// GenAI attributes (mcp.method.name, gen_ai.tool.name, gen_ai.operation.name, mcp.session.id,
// mcp.protocol.version, network.transport, error.type) plus mcpbridge.server.id and
// mcpbridge.call.origin, and the call's W3C trace context (traceparent, tracestate, baggage)
// goes into the request's params._meta so the server's spans join the host's trace. Metrics:
// mcp.client.operation.duration (seconds) and mcpbridge.call.errors, by method, tool and
// error.type. With no hooks and no provider a call costs what it did without them.
//
// Exposed resources and prompts get spans named after their method ("resources/read",
// "prompts/get <prompt>", ...); call spans also carry the sizes (mcpbridge.args.bytes,
// mcpbridge.result.bytes); mcp.client.operation.duration is a histogram and
// mcpbridge.call.errors a counter.
//
// A trace from the SDK's in-memory exporter (one agent run: assembly, then a turn with two
// calls to a Streamable HTTP server), printed as a tree (ExampleOptions_tracing builds one).
// mcp.protocol.version is what the bridge negotiated with that server, a go-sdk stateful
// Streamable HTTP server that offers versions up to 2025-11-25; the bridge pins none:
//
//	agent run  [internal] span=a5e46a883aa857b9 99.39ms
//	  connect files  [client] span=2674fc121f272e1b 80.16ms
//	      mcpbridge.server.id=files
//	      mcp.protocol.version=2025-11-25
//	      network.transport=tcp
//	      network.protocol.name=http
//	      mcpbridge.tools=3
//	      event initialize mcpbridge.phase=initialize mcpbridge.duration_ms=78.468055
//	      event tools/list mcpbridge.phase=tools/list mcpbridge.duration_ms=1.10838
//	  agent turn 1  [internal] span=7642966453dee7b1 12.34ms
//	    tools/call delete_file  [client] span=9256fe62b6dd13af 11.3ms
//	        mcp.method.name=tools/call
//	        mcpbridge.server.id=files
//	        mcpbridge.call.origin=handler
//	        gen_ai.tool.name=delete_file
//	        gen_ai.operation.name=execute_tool
//	        mcp.protocol.version=2025-11-25
//	        network.transport=tcp
//	        network.protocol.name=http
//	        mcp.session.id=YFZLVN6H6B5PWWSC2W7ECKIRVQ
//	        mcpbridge.args.bytes=20
//	        mcpbridge.result.bytes=7
//	    tools/call read_file  [client] span=1f56e831bdd91bc7 970µs
//	        (same attributes)
//
// and the _meta the server received with each call:
//
//	map[traceparent:00-eb076aa1d0e26a8ee0936d297d039629-9256fe62b6dd13af-01]
//	map[traceparent:00-eb076aa1d0e26a8ee0936d297d039629-1f56e831bdd91bc7-01]
package bridge
