// Command mcpbridge checks MCP servers the way an agent built on package bridge will see them.
//
// Usage:
//
//	mcpbridge probe [FILE] [--json] [-v] [--timeout D] [-- CMD [ARG...] | -- URL]
//	    dial every server and report what works
//	mcpbridge tools [FILE] [--json] [--format F] [--strict] [--adapt] [--gemini-parameters]
//	      [--defer S] [-v] [--timeout D] [-- CMD [ARG...] | -- URL]
//	    list the tools exactly as a model sees them
//	mcpbridge call [FILE] TOOL ['JSON'] [--cache C] [-v] [--timeout D]
//	      [-- CMD [ARG...] | -- URL]
//	    call one tool, print what the model reads
//	mcpbridge skills [FILE] [SKILL] [--json] [-v] [--timeout D] [-- CMD [ARG...] | -- URL]
//	    list the servers' skills, or print one
//	mcpbridge serve [FILE] [--addr ADDR] [-v] [--timeout D] [-- CMD [ARG...] | -- URL]
//	    see and try every server, tool and MCP App in a browser
//	mcpbridge login FILE [ID...] [--no-browser] [--wait D] [-v] [--timeout D]
//	    log in to OAuth servers once, in a browser
//	mcpbridge logout FILE ID... [-v]
//	    forget the stored OAuth tokens of servers
//	mcpbridge version
//	    print the version
//	mcpbridge help [COMMAND]
//	    show help for mcpbridge or one command
//
// FILE is a servers file in any of the ecosystem's dialects (Claude Desktop, Cursor, VS Code,
// Windsurf, Gemini CLI, mcphost, the bridge's own servers.yaml); see the servers-file section
// of package bridge.
//
// "mcpbridge help COMMAND" (or "COMMAND -h") shows a command's flags; flags go before or after
// the arguments. The usage block above is generated from the command table in commands.go
// ("go test ./cmd/mcpbridge -run TestUsageDocs -update" rewrites it here and in the README,
// and the test fails when they drift).
//
// # probe
//
// probe dials every server in parallel, shows progress on stderr while it waits (a line per
// server as it finishes, and on a terminal an updating status line), then prints one report
// per server on stdout: status, transport, phase timings, server name and version, protocol
// version, model-visible / app-only / MCP App tool counts, renamed tools and why, schema
// problems (the bridge's own findings plus a lint for schemas model providers reject), what
// the tool definitions cost in o200k_base tokens (package bridge/tokens; the three largest
// tools, every tool in --json), the server's instructions (untrusted text, escaped, at most
// six lines; all of it in --json), what the server offers for MCP tasks and which tools run
// as tasks, and for a failed server the phase, cause and the tail of its stderr (for a stdio
// server npm could not install, npm's own error line; for one that timed out, whether npx was
// still installing the package, on Linux). --json prints one JSON document instead. The providers lines
// say what each model API field would reject as sent and after adapting (package
// bridge/provider); the JSON document has it per tool.
//
// A real run against the integration servers (abridged to three of five servers):
//
//	$ go run ./cmd/mcpbridge probe integration/servers.yaml
//	✓ everything  13 tools  4.1s
//	✓ memory  9 tools  4.1s
//	✓ filesystem  14 tools  4.6s
//	✓ system-monitor  1 tools  4.7s
//	✓ basic-vanillajs  1 tools  4.7s
//	integration/servers.yaml: 5 of 5 servers ok, 38 model-visible tools, 3,743 tokens of tool definitions (o200k_base)
//
//	everything  ok
//	  config        stdio npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio
//	  defined at    integration/servers.yaml:9
//	  transport     stdio
//	  timings       initialize 4.0s, tools/list 38ms, total 4.1s
//	  server        mcp-servers/everything 2.0.0, protocol 2025-11-25 (initialize after server/discover failed: Method not found (-32601))
//	  tools         13 model-visible, 0 app-only, 0 MCP App
//	  model sees    echo, get-annotated-message, get-env, get-resource-links,
//	                get-resource-reference, get-structured-content, get-sum, get-tiny-image,
//	                gzip-file-as-resource, toggle-simulated-logging, toggle-subscriber-updates,
//	                trigger-long-running-operation, simulate-research-query
//	  tasks         2025-11-25 tasks (tools/call, cancel)
//	  task tools    simulate-research-query (required)
//	  providers     accepted as sent: openai, anthropic, gemini
//	                openai-strict: 13 tools rejected as sent (strict-additional-properties ×13, strict-format ×1, strict-required ×10); all fixed by adapting
//	                gemini-parameters: 13 tools rejected as sent (gemini-empty-object ×4, gemini-string-format ×1, gemini-unknown-field ×13); all fixed by adapting
//	  tokens        1,071 (o200k_base) for 13 tool definitions; largest: gzip-file-as-resource 202, simulate-research-query 132, get-annotated-message 103
//	  instructions  312 tokens, untrusted text from the server:
//	                | # Everything Server – Server Instructions
//	                |
//	                | Audience: These instructions are written for an LLM or autonomous agent integrating with the Everyth…
//	                | Follow them to use, extend, and troubleshoot the server safely and effectively.
//	                |
//	                | ## Cross-Feature Relationships
//	                … 22 more lines
//
//	memory  ok
//	  config      stdio npx -y @modelcontextprotocol/server-memory@2026.8.31 env={MEMORY_FILE_PATH=***}
//	  defined at  integration/servers.yaml:17
//	  transport   stdio
//	  timings     initialize 4.1s, tools/list 21ms, total 4.1s
//	  server      memory-server 0.6.3, protocol 2025-11-25 (initialize after server/discover failed: Method not found (-32601))
//	  tools       9 model-visible, 0 app-only, 0 MCP App
//	  model sees  create_entities, create_relations, add_observations, delete_entities,
//	              delete_observations, delete_relations, read_graph, search_nodes, open_nodes
//	  providers   accepted as sent: openai, anthropic, gemini
//	              openai-strict: 9 tools rejected as sent (strict-additional-properties ×14); all fixed by adapting
//	              gemini-parameters: 9 tools rejected as sent (gemini-empty-object ×1, gemini-unknown-field ×9); all fixed by adapting
//	  tokens      891 (o200k_base) for 9 tool definitions; largest: create_relations 134, delete_relations 133, create_entities 129
//
//	system-monitor  ok
//	  config      stdio npx -y @modelcontextprotocol/server-system-monitor@2.0.3 --stdio
//	  defined at  integration/servers.yaml:27
//	  transport   stdio
//	  timings     initialize 4.6s, tools/list 3ms, total 4.7s
//	  server      System Monitor Server 1.0.0, protocol 2025-11-25 (initialize after server/discover failed: Method not found (-32601))
//	  tools       1 model-visible, 1 app-only, 1 MCP App
//	  model sees  get-system-info
//	  app-only    poll-system-stats
//	  App tools   get-system-info → ui://system-monitor/mcp-app.html
//	  providers   accepted as sent: openai, anthropic, gemini
//	              openai-strict: 1 tool rejected as sent (strict-additional-properties ×1); all fixed by adapting
//	              gemini-parameters: 1 tool rejected as sent (gemini-empty-object ×1, gemini-unknown-field ×1); all fixed by adapting
//	  tokens      67 (o200k_base) for 1 tool definition
//
// On a first run npx -y downloads each server, which can take minutes on a busy machine;
// integration/servers.yaml gives each server timeouts: {connect: 240s} for that reason.
//
// call shows, on stderr while the tool runs, the progress the server reports and each status
// of an MCP task (tools that run as tasks are called like any other); Ctrl-C cancels the
// call and the task on the server. serve's page does the same for its calls, has a Stop
// button, and shows a task's requests for input (input_required) as forms to answer.
//
// Two lines a server's author should act on (from the golden tests in testdata). A server
// that prints lines that are not JSON-RPC on stdout (a logger left on stdout) still works —
// the lines are skipped and logged at warn, rate-limited and escaped — and probe says so; a
// server that dies says how (exit status or signal, how long it ran, its last stderr line or
// "nothing on stderr") instead of just EOF:
//
//	problems    [bridge]: 2 non-protocol lines on stdout (skipped; the server should write logs to stderr)
//	...
//	failed in    initialize
//	error        calling "initialize": server process exited (exit status 3) after 6ms; last stderr line: "crash: fatal: cannot start": reading stdout: EOF
//
// # tools and call
//
// tools lists the tools exactly as a model sees them; --json prints them as json.Marshal of
// bridge.Tools does, each with "server" (its server's ID) after the rest, so a host that
// stores the list keeps the server for Tool.ServerID (search ranks by it); with --format
// openai|openai-responses|anthropic|gemini (and --strict, --adapt, --gemini-parameters) it
// prints the request's "tools" array exactly as package bridge/provider would send it on
// stdout, and what was adapted and what is still rejected on stderr, with the array's cost in
// tokens. --defer client|hosted|regex builds it with deferred loading (bridge/provider's
// Options.Defer: servers with "defer: false" stay loaded) and says on stderr how many tokens
// the model reads before it searches. call calls one tool and prints what the model reads.
//
// # serve
//
//	$ go run ./cmd/mcpbridge serve integration/servers.yaml
//	connecting 5 servers…
//	serving 5 servers on http://127.0.0.1:7391/?token=4f1c…   (Ctrl-C to stop)
//
// Open the printed URL. The page lists every server (status, transport, protocol, timings,
// problems, renamed tools) and its tools as the model sees them, app-only tools marked. Pick a
// tool to call it from a form built from its schema (or edit the arguments as JSON); the page
// shows what the model reads and the raw tools/call result, errors included.
//
// An MCP App tool's result renders its ui:// resource as the MCP Apps specification
// (2026-01-26) asks of a web host: the View runs in a sandbox proxy on a second loopback
// origin, inside a srcdoc frame without allow-same-origin, under a Content-Security-Policy
// built on the server from the resource's _meta.ui.csp (the spec's restrictive default,
// widened only by declared origins; keywords, * and anything that is not a plain origin are
// dropped). The page answers ui/initialize with host capabilities and context (theme, display
// mode, container size, locale, the tool), sends the tool input and result after
// ui/notifications/initialized, follows size changes, shows ui/message, ui/open-link (as a link
// to click) and ui/update-model-context, and sends ui/resource-teardown before removing a View.
// The App's tools/call and resources/read go through Set.ProxyHandler by server hash, so the
// visibility rules hold: an App can call app-only tools of its own server, never model-only
// tools or another server's.
//
// On a laptop it stays local: both listeners bind 127.0.0.1 (--addr takes loopback addresses
// only); every request needs the run's token (in the printed URL once, then an HttpOnly
// SameSite cookie); Host and Origin/Sec-Fetch-Site are checked against DNS rebinding and
// cross-site requests; no server text ever becomes HTML on the page (Trusted Types are required
// with no policy). The page is a few embedded files (go:embed); no bundler or Node.js is needed
// to build or run it. Browser tests (internal/serve, integration/serve_test.go) drive it in
// headless Chromium and write screenshots to artifacts/ (gitignored). More in package
// internal/serve.
//
// # login and logout
//
// login logs in to servers with auth: {type: oauth} once (the authorization code flow with
// PKCE, a loopback redirect on 127.0.0.1, the browser opened where there is one and the URL
// always printed on stderr); the tokens go to the per-user token file (0600) and are
// refreshed silently afterwards. The other commands never wait for a person: a server that
// needs a login fails saying which login command to run. probe shows each server's grant
// ("oauth: token valid until 14:02, refresh token kept (authorization_code grant)", and
// "DPoP-bound token" for tokens bound to a key); logout forgets the tokens. The headless
// types (client_credentials, workload_identity, enterprise) need no login.
//
//	$ mcpbridge login servers.yaml tracker   # opens the browser (or prints the URL), waits on a loopback redirect
//	$ mcpbridge probe servers.yaml           # tracker ... auth  oauth: token valid until 14:02, refresh token kept (authorization_code grant)
//	$ mcpbridge logout servers.yaml tracker  # forgets the tokens
//
// login without IDs logs in to every type: oauth server of the file. It listens on 127.0.0.1
// on a random port for the redirect (RFC 8252), accepts it once and only with the state it
// sent, gives up after --wait (5 minutes), and opens the system browser (xdg-open where there
// is a display, open, rundll32; never through a shell); --no-browser only prints the URL. The
// token file and the other OAuth details are in package bridge's OAuth section.
//
// # Exit status and logs
//
// Exit status: 0 when everything worked; 1 for a usage or servers-file error; 2 when a server
// failed (probe, tools) or the call failed (call; a tool's own error prints its text on stdout).
// Secrets are shown as ***.
//
// Logs go to stderr through tint, coloured only when stderr is a terminal and NO_COLOR is
// empty or unset; -v logs at debug level, including each stdio server's stderr. Secrets
// (header and env values, URL credentials and query values, OAuth client secrets, tokens and
// codes) are never printed.
package main
