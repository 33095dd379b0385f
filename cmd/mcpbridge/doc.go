// Command mcpbridge checks MCP servers the way an agent built on package bridge will see them.
//
// Usage:
//
//	mcpbridge probe FILE [--json] [-v] [--timeout D]                                                          dial every server and report what works
//	mcpbridge tools FILE [--json] [--format F] [--strict] [--adapt] [--gemini-parameters] [-v] [--timeout D]  list the tools exactly as a model sees them
//	mcpbridge call FILE TOOL ['JSON'] [-v] [--timeout D]                                                      call one tool, print what the model reads
//	mcpbridge serve FILE [--addr ADDR] [-v] [--timeout D]                                                     see and try every server, tool and MCP App in a browser
//	mcpbridge login FILE [ID...] [--no-browser] [--wait D] [-v] [--timeout D]                                 log in to OAuth servers once, in a browser
//	mcpbridge logout FILE ID... [-v]                                                                          forget the stored OAuth tokens of servers
//	mcpbridge version                                                                                         print the version
//	mcpbridge help [COMMAND]                                                                                  show help for mcpbridge or one command
//
// FILE is a servers file in any of the ecosystem's dialects (Claude Desktop, Cursor, VS Code,
// Windsurf, Gemini CLI, mcphost, the bridge's own servers.yaml); see bridge.ReadConfig.
//
// probe dials every server in parallel, shows progress on stderr while it waits (a line per
// server as it finishes, and on a terminal an updating status line), then prints one report
// per server on stdout: status, transport, phase timings, server name and version, protocol
// version, model-visible / app-only / MCP App tool counts, renamed tools and why, schema
// problems (the bridge's own findings plus a lint for schemas model providers reject), an
// estimate of the tokens the tool definitions cost, and for a failed server the phase, cause
// and the tail of its stderr. --json prints one JSON document instead.
//
// login logs in to servers with auth: {type: oauth} once (the authorization code flow with
// PKCE, a loopback redirect on 127.0.0.1, the browser opened where there is one and the URL
// always printed on stderr); the tokens go to the per-user token file (0600) and are
// refreshed silently afterwards. The other commands never wait for a person: a server that
// needs a login fails saying which login command to run. probe shows each server's grant
// ("oauth: token valid until 14:02, refresh token kept"); logout forgets the tokens.
//
// Exit status: 0 when everything worked; 1 for a usage or servers-file error; 2 when a server
// failed (probe, tools) or the call failed (call; a tool's own error prints its text on stdout).
//
// Logs go to stderr through tint, coloured only when stderr is a terminal and NO_COLOR is
// empty or unset; -v logs at debug level, including each stdio server's stderr. Secrets
// (header and env values, URL credentials and query values, OAuth client secrets, tokens and
// codes) are never printed.
package main
