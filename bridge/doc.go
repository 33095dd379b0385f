// Package bridge turns MCP servers into inline agent tools.
//
// Where things are:
//
//	ConnectServers(cfgs)        the one-liner: Tools of every server that worked, failures logged
//	Connect(ctx, cfgs, opts)    the same with a context and Options; returns the *Set (Tools, Failed, Close)
//	Options, UserOptions        everything optional: logger, hooks, limits, tracing, users, tasks
//	ServerConfig                one server: Command+Args (stdio), URL (HTTP/SSE), InProcess; timeouts, filters
//	LoadConfig, bridge/config   the servers file (the Claude Desktop / VS Code / Cursor dialects and ours)
//	Tool, Tools                 what the model sees (Name, Description, Parameters) and Handler
//	bridge/provider/...         model API envelopes; typed glue per SDK; bridge/eino, genkit, langchaingo
//	bridge/auth, redisstore     OAuth; tokens shared by replicas
//
// Connect (or ConnectServers) dials every configured server concurrently — local commands over
// stdio, remote Streamable HTTP or legacy SSE endpoints — lists every page of its tools and
// returns them as plain values:
//
//	tools := bridge.ConnectServers(cfgs) // failures logged and skipped
//	defer tools.Close()
//
// or, with full control:
//
//	set, err := bridge.Connect(ctx, cfgs, opts) // err only when nothing should run
//	if err != nil {
//		return err
//	}
//	defer set.Close()
//	tools := set.Tools() // hand them to the model: see the "Use it with" table in the README
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
// Each Tool is a plain value (its fields say exactly what the server sent and what was
// repaired); json.Marshal(tool) gives {"name","description","parameters"}, so a list can go
// to a model API as is (package bridge/provider gives each API its own envelope). A
// Handler validates the model's arguments against the tool's schema (drafts 4 to 2020-12;
// external $refs are refused, never fetched), calls tools/call and flattens the result
// (package results, capped by Options.MaxResultBytes). A schema that does not compile or is
// over the schema budgets turns validation off for that tool, with a ToolProblem (an
// inputSchema is measured at listing but compiled on its first call). A Handler's error
// tells three cases apart:
//
//	out, err := tool.Handler(ctx, args)
//	var te *results.ToolError
//	switch {
//	case errors.As(err, &te): // the tool itself failed (isError): te.Text is for the model
//	case errors.Is(err, bridge.ErrInvalidArguments): // arguments do not match the schema; server not contacted
//	case err != nil: // transport or protocol failure: a *bridge.ServerError naming server, phase and tool
//	}
//
// WithProgress passes a long-running tool's progress notifications to the caller.
// Set.Search ranks the set's tools for a task in words (package bridge/toolsearch).
// Server.Instructions are each server's own instructions (untrusted, escaped, bounded);
// InstructionsPrompt frames them as a system-prompt section that says so. Token counts are
// in package bridge/tokens. A server in the same process (a go-sdk mcp.Server) is reached
// with ServerConfig.InProcess.
//
// # Names
//
// A tool keeps its server name when it matches ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (valid for
// OpenAI, Anthropic and Gemini); otherwise SanitizeToolName repairs it. When two servers offer
// the same name, the later server in config order gets "<serverID>__<name>", plus a hash
// suffix if that still clashes. Names depend only on the configuration and the listings,
// never on which server answered first; every rename is logged, and RemoteName keeps the
// server's own name.
//
// # Servers
//
// Each ServerConfig is a stdio command or a URL: Streamable HTTP, legacy SSE, or inferred
// (Streamable HTTP first, falling back to SSE when the endpoint answers like an old SSE
// server). All servers are dialled at once; tools come back in config order. A server that
// fails or hangs costs the others nothing: it is logged once and skipped, and Set.Failed holds
// its *ServerError{Server, Phase, Err, Stderr}. Connect's own error is only for invalid input,
// a Required server that failed, or a ctx that ended first (every server started is then
// closed). ConnectTimeout and CallTimeout bound start-up and calls, per server or in Options.
//
// When a server announces a changed tool list the bridge re-lists it in the background:
// removed tools fail with ErrToolGone, changed schemas are validated anew, and
// Options.OnToolsChanged says what changed; the model's list stays what Connect returned (a
// changing list would break prompt caches). A tool whose execution.taskSupport is "required"
// runs as an MCP task (see Tasks); it is skipped, with a ToolProblem, only on a server that
// offers no tasks the bridge speaks. Options.OnElicitation answers a server's requests for
// user input (form and URL mode, and 2026-07-28 input_required round trips); without it the
// capability is not advertised and a call that needs input fails saying so, never hangs.
//
// stdio servers run in their own process group with stderr drained; Close ends the whole
// group, npx and sh -c grandchildren included (see transport.TagEnv for daemons that leave
// it). Secrets (header and env values, URL user info and query, credential-like arguments)
// never reach logs, errors or CLI output; package internal/redact holds the rules, and
// ServerConfig masks itself when printed. A secret in a URL's path is shown.
//
// # Protocol versions
//
// The bridge speaks every version go-sdk does and negotiates per server: server/discover
// with 2026-07-28 first, initialize with 2025-11-25 when the server does not speak it;
// ServerConfig.ProtocolVersion pins one. ServerStatus.ProtocolVersion and Negotiation say
// what each server got and how; ServerStatus's doc has the rules.
//
// # Sessions
//
// A Server holds one MCP session, redialled on the next call when it dies (one redial shared
// by concurrent callers, with backoff); a call is re-sent on the new session only when it
// cannot have reached the server or the tool says it is safe to repeat (Server's doc).
//
// # Around each call
//
// Everything here is off unless the host sets it, and then costs nothing when unset
// (BENCHMARKS.md, "Hooks and tracing"). Options.BeforeCall approves or refuses every call
// (Handler, Server.CallTool, an App's tools/call through Set.Proxy: Call.Origin) after its
// arguments were validated; Deny(reason) refuses with a text the model reads, and a refused
// call never reaches the server. Options.AfterCall gets every call's CallEnd (outcome,
// duration, sizes) for audit logs and metrics (ExampleOptions_afterCall).
//
//	opts := &bridge.Options{BeforeCall: func(ctx context.Context, c *bridge.Call) error {
//		if a := c.Annotations; a != nil && a.ReadOnlyHint {
//			return nil
//		}
//		if ok, err := askUser(ctx, c.Server.ID(), c.Title, c.Args); err != nil || !ok {
//			return bridge.Deny("the user declined")
//		}
//		return nil
//	}}
//
// WithCallHeaders and WithCallMeta send one user's credentials and _meta with that user's
// calls on a shared session. Tools.Filter takes the servers file's globs. ServerConfig.Expose
// offers a server's resources and prompts as tools (see ExposeResources).
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
// own account. With Options.Users set, the host names the user of each call with WithUser.
// For a server with the OAuth authorization code flow that user's grant, OAuth handler,
// session (where the server keeps one) and catalogue (where the server asks for it) are the
// user's own; a user without a grant gets a *NeedsLoginError whose AuthorizationURL starts
// the login, completed by Set.CompleteLogin; a call without a user on such a server is
// refused. Set.ToolsFor gives a user the shared tools plus their own. UserOptions' doc says
// what is shared and what is per user; Example_users is a web host serving several users.
//
// # Hostile servers
//
// A server is untrusted input: it may send what it likes, as large and as often as it likes,
// and its text ends up on the operator's terminal and in the model's request. Every resource
// it controls is bounded (see Limits); over a limit, that server (or that tool) loses, never
// the host. Our own work in a call (compiling, validating) runs within the call's deadline;
// re-listings are coalesced and unchanged schemas are not compiled again; control characters
// in CLI output and logs are escaped; invalid UTF-8 in a Tool becomes U+FFFD, so
// json.Marshal(tools) is always valid; App proxy requests are accepted from loopback only
// unless Options.ProxyAccess widens it. go-sdk refuses a JSON-RPC message nested more than
// 1,000 levels: the request it answers fails at once, in its phase.
//
// # Limits
//
// Everything a server, a servers file or a token endpoint controls is bounded; past a limit that
// server (or that tool, or that file) loses, never the host. Every limit (its value, the Options
// or UserOptions field that changes it, what it bounds and what happens past it) is listed in one
// place, checked against the table in limits.go: the doc of [DefaultConnectTimeout] (go doc
// bridge.DefaultConnectTimeout). Options comments name their default's constant.
//
// # Tasks
//
// Some tools run long as MCP tasks: the server answers tools/call with a task handle and the
// client polls for the result. go-sdk has no client side for them, so the bridge drives
// them itself, in both versions (2025-11-25's experimental tasks and the 2026-07-28 tasks
// extension). To the model a task tool is a tool like any other: its Handler runs the whole
// lifecycle (polling, status reports to WithProgress and Options.OnTaskStatus, input through
// Options.OnElicitation, tasks/cancel when ctx ends) within Options.TaskTimeout and returns
// the result. A server that tells a task's new state is heard at once: 2025-11-25's
// notifications/tasks/status, and the extension's notifications/tasks, which the bridge
// subscribes to for each task in flight (a user's tasks on that user's session); polling at the
// server's pollInterval stays the fallback. ServerConfig.Tasks says which tools run as tasks. Hosts can also detach:
// Server.StartTask returns once the task exists, and PollTask, AwaitTask and CancelTask take
// its ID later. Task's doc has the details.
//
// # Tracing
//
// The bridge uses the OpenTelemetry API only and records nothing until the host installs a
// provider (Options.TracerProvider and MeterProvider, or the global ones). Then each server's
// start-up gets a "connect <serverID>" span, each call a client span "tools/call <tool>" with
// the semantic conventions' MCP and GenAI attributes, and the call's W3C trace context goes
// into the request's params._meta so the server's spans join the host's trace. Metrics:
// mcp.client.operation.duration (a histogram, seconds) and mcpbridge.call.errors (a counter),
// by method, tool and error.type. Example_tracing in integration/tracing prints a trace
// (the OpenTelemetry SDK is a dependency of the integration module only).
package bridge
