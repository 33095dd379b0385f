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
package bridge
