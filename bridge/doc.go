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
// # Names
//
// A tool keeps its server name when it matches ^[A-Za-z_][A-Za-z0-9_-]{0,63}$; otherwise
// invalid characters become "_", a leading digit or dash gets a "_" in front, and names over
// 64 bytes are cut with a short stable hash suffix. When two servers offer the same name, the
// later server in config order gets "<serverID>__<name>"; if that still clashes a hash suffix
// is added. Names depend only on the configuration and the servers' tool lists, never on
// which server answered first. RemoteName keeps the server's own name for tools/call.
//
// # Sessions
//
// A Server holds one MCP session. A dead session (process exit, EOF, HTTP session expiry) is
// redialled on the next call, one redial shared by concurrent callers, with backoff against
// crash loops. A call that failed because the session died is retried after the redial only
// when it cannot have reached the server or the tool is annotated readOnlyHint or
// idempotentHint; otherwise the error says the tool may have run.
//
// # Around each call
//
// Options.BeforeCall sees every tool call (a Handler, Server.CallTool, an App's tools/call
// through Set.Proxy; Call.Origin says which) with the tool's annotations and the validated
// arguments, and may let it go ahead, refuse it with Deny (the model reads the reason; the
// server is never contacted) or block to ask a human, bounded by the call timeout.
// Options.AfterCall reports each call's outcome (ErrorKind), duration and sizes.
// WithCallHeaders and WithCallMeta add HTTP headers (a user's own token) and params._meta
// entries to the calls made under a context. Tools.Filter gives an agent a subset of the
// tools by the servers file's globs. ServerConfig.Expose offers a server's resources and
// prompts as tools.
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
package bridge
