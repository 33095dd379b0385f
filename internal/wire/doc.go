// Package wire is the bridge's direct MCP client, owned once: tools/call sent beside
// go-sdk's session without its per-call machinery, giving what go-sdk's
// mcp.ClientSession.CallTool gives — the same result value, the same errors and error
// texts. A differential test (difftest_test.go) holds it to that on stdio and Streamable
// HTTP, on protocols 2025-11-25 and 2026-07-28.
//
// It imports no other package of the module but internal/jsonstr (the one JSON string
// encoder, a leaf). Package transport builds one Client per connection and feeds it:
//
//   - stdio, in-process and legacy SSE connections hand their call table (Calls) and
//     writer to Client.Attach; their readers pass what they read through Calls.Deliver
//     (or DirectResult and Calls.DeliverResult for the common line), their writers pass
//     go-sdk's tools/call through Calls.StandIn, and they call Calls.Terminate when the
//     connection ends. A direct call has its own ID space (negative integers; go-sdk
//     counts up from 1), so its response is taken off the wire before go-sdk sees it.
//   - Streamable HTTP on protocol 2026-07-28, which is stateless, sends each call as one
//     POST through the connection's own http.Client (HTTP), with the protocol-version,
//     Mcp-Method, Mcp-Name and Mcp-Param-* headers (SEP-2243; paramheaders.go), and reads
//     the JSON or event-stream answer itself under the connection's Budget.
//   - Streamable HTTP before 2026-07-28 (a stateful session: go-sdk keeps initialize, the
//     standalone stream and every other method) sends each call as one POST beside
//     go-sdk's session, with its Mcp-Session-Id and protocol version, when initialize
//     declared no roots, sampling or elicitation; the server's requests on the call's
//     stream get go-sdk's replies for a client without those handlers (stateful.go).
//   - Every connection records the _meta of go-sdk's server/discover request in the
//     client's Envelope: from 2026-07-28 on every direct call carries it (SEP-2575).
//
// A result asking for input (resultType "input_required", SEP-2322) comes back as an
// *InputRequiredError whose Continue hands the call to go-sdk's multi-round-trip loop
// without running the tool's first round again (resume.go).
//
// The framing (DecodeLine, AppendMessage: newline-delimited JSON-RPC without go-sdk's
// per-message 32 KB buffers), the SSE parser (SSEParser, go-sdk's event rules), Bound (a
// cheap call deadline the call table sweeps) and Taps (a request go-sdk sends that gets a
// params member added and its raw result kept: MCP 2025-11-25 task augmentation, the
// server's tasks capability) live here because the direct client needs them and the
// connections share them.
package wire
