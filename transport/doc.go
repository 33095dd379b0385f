// Package transport turns one MCP server's connection settings into an
// [mcp.Transport] for go-sdk's [mcp.Client.Connect], and owns everything below
// the MCP session: the stdio child process (environment, working directory,
// process group, stderr drain, shutdown), the HTTP plumbing (header
// injection, URL secrets, Streamable HTTP with legacy SSE fallback), and the
// capture of the raw tools/list bytes, so that tool schemas can be passed on
// byte for byte (go-sdk decodes them into maps, losing key order and big
// integer precision).
//
// # Usage
//
//	kinds, err := transport.Kinds(spec) // e.g. [http sse] for a URL
//	for _, k := range kinds {
//		c, err := transport.Open(spec, k)
//		cs, err := client.Connect(longLivedCtx, c.Transport(), nil) // go-sdk negotiates the protocol version
//		if err != nil {
//			c.Close()
//			if c.FallbackToSSE() { continue } // try the next kind
//			return err
//		}
//		... cs.ListTools ...; raw := c.TakeTools()
//		defer cs.Close(); defer c.Close()
//	}
//
// A [Conn] is single use: one Open, one Connect, one Close. Reconnecting means
// a new Open.
//
// # stdio
//
// The command is started directly (no shell), in its own process group, with
// the parent environment plus [Spec.Env]. The command is looked up with
// [exec.LookPath] semantics; if Spec.Env sets PATH, that PATH is used for the
// lookup (it is also the PATH the child sees), otherwise the parent's PATH. A
// relative command containing a path separator is resolved against
// [Spec.Dir] when Dir is set. Stderr is always drained: the last
// [Spec.StderrTailBytes] are kept for [Conn.Stderr] and every line is logged
// at Debug level with the attribute server=<ID>. Environment values are never
// logged.
//
// Shutdown (whether started by [Conn.Close] or by the MCP session closing its
// connection) follows the MCP spec: close stdin, wait [Spec.Grace], SIGTERM
// the process group, wait Grace, SIGKILL the process group, and reap the
// child. When the child exits on its own, the rest of its process group is
// killed at once, so `sh -c` and npx grandchildren never outlive it. On Linux
// the child also gets Pdeathsig SIGKILL, so it dies with the parent. On
// Windows the child is started in a new process group and killed with
// TerminateProcess; its own children are not tracked there.
//
// A descendant that leaves the process group (a daemon that double-forks and
// calls setsid) escapes the group signals. Every child is started with
// [TagEnv] set to a value unique to its Conn, which descendants inherit; on
// Linux the teardown (and the child's own exit) SIGKILLs every process of
// this user whose /proc/<pid>/environ holds it. macOS and Windows have no
// such lookup: there such a daemon outlives Close, as does, everywhere, a
// descendant that clears its environment before detaching.
//
// # HTTP and SSE
//
// go-sdk is given a masked endpoint: no userinfo, and every query value and
// every bare query key replaced by "***". The package's [http.RoundTripper] restores the real URL
// (and sends the userinfo as basic auth) on the way out, so no error produced
// by net/http or go-sdk can contain URL secrets. [Spec.Headers] (and the
// userinfo as basic auth, unless Headers set Authorization) are added to
// every request to the endpoint's host and port; requests redirected to
// another host do not get them, like net/http's handling of sensitive
// headers. Errors from a base RoundTripper that quote a secret anyway have it
// replaced by "***".
//
// For Streamable HTTP the go-sdk connection is handed over unwrapped (wrapping
// it disables go-sdk's Mcp-Protocol-Version header and standalone GET stream);
// tools/list responses are captured by the RoundTripper, which tees response
// bodies (application/json and text/event-stream) as go-sdk reads them. For
// stdio and legacy SSE the connection is wrapped and the decoded JSON-RPC
// messages are inspected.
//
// # Direct tool calls
//
// [Conn.Direct] is the connection's direct client (package internal/wire, the bridge's):
// tools/call without go-sdk's per-call machinery, giving what go-sdk's
// [mcp.ClientSession.CallTool] gives. The connection's readers hand it the responses to
// its calls before go-sdk sees them; on Streamable HTTP it posts through the connection's
// HTTP client, so headers, OAuth, the byte budget and redaction apply to it as to go-sdk's
// requests. A request go-sdk sends under a context carrying the client's tap can have a
// member added to its params and its raw result kept, on every kind; over Streamable HTTP,
// tasks/get, tasks/update and tasks/cancel also get the Mcp-Name header the tasks
// extension requires.
//
// # Stability
//
// This package is public so that a host can reach one server without the bridge. It
// exports these 17 package-level names and the methods of Conn, stable (kept compatible
// across minor versions once the module is tagged) except where noted:
//
//   - [Spec] (its fields ID, Kind, Command, Args, Env, Dir, URL, Headers, Logger,
//     StderrTailBytes, Grace, MaxFrameBytes and HTTPClient; OAuth, InProcess, WrapBase and
//     OnCredential serve the bridge and may change in any release);
//   - [Kind], [KindStdio], [KindHTTP], [KindSSE], [KindInProcess] and [Kinds];
//   - [Open] and [Conn], with [Conn.Transport], [Conn.TakeTools], [Conn.FallbackToSSE],
//     [Conn.Stderr], [Conn.Overrun], [Conn.Reached], [Conn.Running], [Conn.Installing],
//     [Conn.NonProtocolLines] and [Conn.Close]; and [Conn.Direct] and
//     [Conn.OnNotifications], which serve the bridge (Direct's result type is internal) and
//     may change in any release;
//   - [DefaultGrace], [DefaultStderrTailBytes], [DefaultMaxMessageBytes], [DefaultNudgeAfter]
//     and [TagEnv];
//   - [ErrMessageTooLarge], [ErrFrameTooLarge] and [ErrUsed].
//
// Per-call headers are set with bridge.WithCallHeaders.
package transport
