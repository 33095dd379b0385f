// Package integration proves that mcpbridge works with real third-party MCP servers from npm:
// the reference servers @modelcontextprotocol/server-everything, server-filesystem and
// server-memory, and the MCP Apps examples server-basic-vanillajs and server-system-monitor.
//
// The servers are pinned in package.json and package-lock.json and installed with
//
//	cd integration && npm ci
//
// The tests start them with `node node_modules/<pkg>/<bin>` (fast, offline), never npx. Without
// node_modules the tests skip, except under CI=true, where they fail: CI must run npm ci first.
// servers.yaml is the same set for `go run ./cmd/mcpbridge probe integration/servers.yaml`,
// started with pinned `npx -y pkg@version`.
//
// The package holds tests only; nothing imports it.
package integration
