// Package config is the servers file: ServerConfig (package bridge aliases it as
// bridge.ServerConfig), the parser of the files of Claude Desktop, Claude Code, Cursor, VS
// Code, Windsurf, Gemini CLI, mcphost, Codex and the bridge's own, Read (the servers and the
// warnings, what the CLI shows) and Load (the warnings logged), and Validate, the rules on a
// ServerConfig's values that the parser applies and Dial and Connect apply to configs built
// in Go. It never imports bridge.
//
// # The servers file
//
// Read and Load read a servers file (bridge.LoadConfig is Load). It is YAML; JSON is YAML, so the JSON files of Claude
// Desktop, Claude Code (.mcp.json), Cursor, VS Code (.vscode/mcp.json), Windsurf, Gemini CLI
// and mcphost are read unchanged. The file holds exactly one map of servers under "servers",
// "mcpServers" or "mcp_servers" (or VS Code's user-settings "mcp": {"servers": ...}); the map
// key is the server ID and map order is config order. Other top-level keys ("inputs",
// "theme", ...) are ignored, except Gemini's "mcp": {"allowed": [...], "excluded": [...]},
// which selects servers by ID. The bridge's own keys, in a file:
//
//	servers:
//	  fs:
//	    command: [npx, -y, "@modelcontextprotocol/server-filesystem@2026.8.31", "${HOME}/data"]
//	    required: true                       # Connect fails without it
//	    prefix: fs                           # always name tools fs__<tool>
//	    tools: {include: ["read_*", "list_*"], exclude: ["*_dangerous"]}
//	    timeouts: {connect: 90s, call: 2m}
//	    expose: [resources, prompts]         # tools for the server's resources and prompts
//	  api:
//	    url: https://mcp.example.com/mcp
//	    headers: {Authorization: "Bearer ${API_TOKEN}"}
//
// Per server (aliases from other dialects in parentheses):
//
//	type (transport, transportType)  stdio|local -> stdio; http|streamable-http|streamable_http|
//	                                 streamableHttp|streamable|remote -> http; sse; auto -> ""
//	command                          a string (with args) or a list whose first item is the program
//	args                             a list; numbers and booleans are stringified
//	env (environment)                a map; numbers and booleans are stringified
//	cwd (dir)                        working directory of a stdio server
//	url (serverUrl)                  endpoint; with no type it stays "" (auto-detect: Streamable
//	                                 HTTP, falling back to SSE), which also covers Gemini's url=SSE
//	httpUrl                          endpoint, and type http (Gemini)
//	headers (http_headers)           a map, or a list of "Name: value" strings (mcphost)
//	disabled: true / enabled: false  skip the server
//	required, prefix                 ServerConfig.Required and Prefix
//	expose: [resources, prompts]     tools for the server's resources and prompts (ServerConfig.Expose)
//	tools: {include: [], exclude: []} glob patterns (path.Match); aliases includeTools/excludeTools
//	                                 (Gemini), allowedTools/excludedTools (mcphost),
//	                                 enabled_tools/disabled_tools (Codex)
//	timeouts: {connect: 30s, call: 60s, task: 10m}  Go durations (task: bridge's Tasks); also
//	                                 connectTimeout/callTimeout (a Go
//	                                 duration or milliseconds), connectionTimeout/requestTimeout
//	                                 (Inspector, ms), startup_timeout_sec/startup_timeout_ms/
//	                                 tool_timeout_sec (Codex) and timeout (Gemini, ms, applies to
//	                                 calls; a number under 1000 is Cline's seconds, with a warning)
//	protocolVersion                  pin the MCP protocol version ("2025-11-25", "2026-07-28", ...;
//	                                 ServerConfig.ProtocolVersion); left out, it is negotiated
//	tasks: auto | always | never     which tools run as MCP tasks (ServerConfig.Tasks; bridge's Tasks)
//	auth (oauth)                     OAuth for a remote server (bridge/auth's package doc)
//	defer: true|false                keep the tools out of (or always in) a deferred-loading
//	                                 tool list (ServerConfig.Defer, bridge/provider)
//
// Two keys that set the same thing (url and serverUrl, env and environment, tools.include and
// includeTools, ...) are an error, as are a command together with a url, neither of them, a
// type that contradicts them, an unknown type, and a duration that is not > 0. "key: null" is
// the same as leaving the key out.
//
// Unknown keys: a key inside "tools" or "timeouts" that is not known is an error, and so is a
// server key within a small edit distance of (or differing only in case from) a key the
// bridge reads ("comand", "requird", "Command"). Keys other clients use that do not change
// how a server is reached ("trust", "autoApprove", "alwaysAllow", "description", ...) are
// ignored silently. Known but unsupported features ("envFile", "headersHelper",
// "bearer_token_env_var", ...) and any other unknown key are warnings naming the key.
//
// Variables are expanded in command, args, env values, cwd, url and header values of enabled
// servers: ${VAR}, ${VAR:-default} (default when VAR is unset or empty; it may itself hold
// ${...}), and the spellings ${env:VAR} (VS Code, Windsurf) and ${env://VAR} (mcphost), each
// with an optional :-default. "$$" and "$VAR" without braces are left as written. An unset
// variable without a default is an error naming file:line, server and field. A VS Code
// ${input:ID} cannot be answered headless: the server is skipped with a warning, or the file is
// an error when the server is required. Errors and warnings never contain env values, header
// values or the defaults of variables.
//
// Also: a disabled server is checked for key errors but not expanded; an mcphost "builtin"
// server is skipped with a warning; args, env and cwd on a url server, and headers on a
// command server, are warnings and dropped.
//
// Limits: files over 8 MiB are refused, as are documents that expand (through aliases and
// merge keys) to more than 200,000 YAML nodes. An error lists every problem found, up to 20,
// each as "file:line: ...".
package config
