package bridge

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.yaml.in/yaml/v3"
)

// The servers-file reader is split by concern:
//
//	config.go           LoadConfig, ReadConfig, ParseConfig and the file format (on LoadConfig)
//	config_yaml.go      walking YAML: positions, errors, the node budget, aliases and merge keys
//	                    (go-yaml's error texts are matched in deptext.go)
//	config_file.go      the document level: where the servers map is, dialects' selections
//	config_keys.go      the one table of server keys (key -> slot -> reader)
//	config_server.go    one server entry: the key loop, combination checks, expansion
//	config_read.go      field readers (strings, lists, maps, headers, tool globs)
//	config_duration.go  timeouts and durations
//	config_expand.go    ${VAR} expansion
//	config_suggest.go   "did you mean" suggestions for misspelt keys

// maxConfigSize bounds a servers file read by ReadConfig.
const maxConfigSize = 8 << 20

// ConfigFile is a parsed servers file with its warnings, for tools that display them (the
// CLI). Servers holds the enabled servers in file order.
type ConfigFile struct {
	Servers  []ServerConfig
	Warnings []string
}

// LoadConfig reads a servers file and returns the enabled servers in file order. Warnings
// (foreign dialects' unknown keys, unresolvable ${input:...}) are logged to slog.Default() at
// Warn. Variables are expanded from the process environment. [ReadConfig] returns the
// warnings instead; [ParseConfig] reads from memory.
//
// # The servers file
//
// A servers file is YAML; JSON is YAML, so the JSON files of Claude Desktop, Claude Code
// (.mcp.json), Cursor, VS Code (.vscode/mcp.json), Windsurf, Gemini CLI and mcphost are read
// unchanged. The file holds exactly one map of servers under "servers", "mcpServers" or
// "mcp_servers" (or VS Code's user-settings "mcp": {"servers": ...}); the map key is the
// server ID and map order is config order. Other top-level keys ("inputs", "theme", ...)
// are ignored, except Gemini's "mcp": {"allowed": [...], "excluded": [...]}, which selects
// servers by ID.
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
//	timeouts: {connect: 30s, call: 60s}  Go durations; also connectTimeout/callTimeout (a Go
//	                                 duration or milliseconds), connectionTimeout/requestTimeout
//	                                 (Inspector, ms), startup_timeout_sec/startup_timeout_ms/
//	                                 tool_timeout_sec (Codex) and timeout (Gemini, ms, applies to
//	                                 calls; a number under 1000 is Cline's seconds, with a warning)
//	protocolVersion                  pin the MCP protocol version ("2025-11-25", "2026-07-28", ...;
//	                                 ServerConfig.ProtocolVersion); left out, it is negotiated
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
// ignored silently. Known but unsupported features ("envFile", "headersHelper", "oauth",
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
func LoadConfig(path string) ([]ServerConfig, error) {
	cf, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	for _, w := range cf.Warnings {
		slog.Default().Warn(w)
	}
	return cf.Servers, nil
}

// ReadConfig reads and parses the servers file at path (format: [LoadConfig]); messages name
// the file as path. Files over 8 MiB are refused.
func ReadConfig(path string) (*ConfigFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read servers file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read servers file: %w", err)
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("read servers file %s: larger than %d bytes", path, maxConfigSize)
	}
	return ParseConfig(data, path)
}

// ParseConfig parses a servers file held in data (format: [LoadConfig]), expanding variables
// from the process environment. name is used in messages ("name:line: ..."). The error, if
// any, lists every problem found (up to a limit), each with its line.
func ParseConfig(data []byte, name string) (*ConfigFile, error) {
	return parseConfig(data, name, os.LookupEnv)
}

// parseConfig is ParseConfig with the environment injected.
func parseConfig(data []byte, name string, lookup lookupFunc) (*ConfigFile, error) {
	p := newParser(name, lookup)
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err)
	}
	cf := &ConfigFile{}
	p.file(&root, cf)
	if len(p.errs) > 0 {
		return nil, p.joined()
	}
	cf.Warnings = p.warns
	if cf.Servers == nil {
		cf.Servers = []ServerConfig{}
	}
	return cf, nil
}
