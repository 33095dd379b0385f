package bridge

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one MCP tool as an inline agent tool. json.Marshal of a Tool gives
// {"name","description","parameters"} with Parameters as the server sent them, so a host can
// hand the list to a model API as is.
type Tool struct {
	// Name is what the model calls: it matches ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ and is unique
	// within the set (see Connect for the renaming rules).
	Name string `json:"name"`
	// Description is the server's description; MCP App tools get "\n[UI Resource: <uri>]"
	// appended.
	Description string `json:"description"`
	// Parameters is the tool's inputSchema, byte for byte as the server sent it (key order,
	// number spelling and escapes kept). Two fixes only, because model APIs reject the
	// request otherwise: a schema that is exactly an object with no "properties" key, such as
	// {"type":"object"}, gains "properties":{}; and bytes that are not UTF-8 (each run of
	// them) become U+FFFD, with a ToolProblem. Description gets the same UTF-8 repair.
	Parameters json.RawMessage `json:"parameters"`
	// Handler calls the tool and returns the text the model reads (see package results).
	// args empty, null or "" mean {}; arguments that are not an object or do not match
	// Parameters give an error wrapping ErrInvalidArguments without contacting the server.
	// A top-level argument that is null is dropped first when its property is not required
	// and its schema does not accept null (models send null for optional arguments they
	// leave out; OpenAI's strict mode always does); a null the schema accepts is sent, and a
	// null for a required property is an invalid-arguments error.
	// A tool's own failure (isError) returns the flattened text together with a
	// *results.ToolError carrying the same text; transport and protocol failures return a
	// *ServerError naming server, phase and tool. Safe for concurrent use; cancelling ctx
	// cancels the call on the server.
	//
	// Validation: drafts 4 to 2020-12, chosen by $schema; external $refs are refused, never
	// fetched or read. Each schema is measured against the schema budgets and compiled at
	// assembly while the connect timeout allows, kept compiled only when large (a compiled
	// schema costs about 20 KB per tool) and compiled again on first use otherwise; a schema
	// that does not compile or is over budget turns validation off for that tool, with a
	// ToolProblem. Flat schemas (typed properties, required, additionalProperties false,
	// string enums, length and item-count bounds: what most servers list) are checked by a
	// walk over the arguments that only ever accepts; what it does not accept goes to the
	// full validator, whose verdict and message count.
	Handler func(ctx context.Context, args json.RawMessage) (string, error) `json:"-"`

	// Server is the connection this tool came from.
	Server *Server `json:"-"`
	// ServerID is the ID of the server this tool came from (ServerConfig.ID), set with
	// Server. Unlike Server it is plain data: a host that stores tool definitions keeps it,
	// and Tools.Index ranks tools without a connection by it as by their server.
	ServerID string `json:"-"`
	// RemoteName is the tool's name on the server, used for tools/call. For the tools that
	// expose a server's resources and prompts (ServerConfig.Expose) it is the MCP method
	// they make ("resources/list", "resources/read", "prompts/list", "prompts/get"), not a
	// tool of the server: call those through Handler or Invoke.
	RemoteName string `json:"-"`
	// UIResource is the ui:// resource an MCP Apps frontend renders for this tool; "" for
	// ordinary tools.
	UIResource string `json:"-"`
	// Title is the server's display title, if any.
	Title string `json:"-"`
	// Annotations are the server's behaviour hints, if any.
	Annotations *mcp.ToolAnnotations `json:"-"`
	// Meta is the tool's _meta as the server sent it, if any.
	Meta json.RawMessage `json:"-"`
	// OutputSchema is the tool's outputSchema as the server sent it, if any.
	OutputSchema json.RawMessage `json:"-"`

	exposed bool // synthesized by ServerConfig.Expose: no tool of that name on the server
}

// PhaseTiming is how long one phase of a server's start-up took.
type PhaseTiming struct {
	Phase    Phase         `json:"phase"`
	Duration time.Duration `json:"duration"`
}

// Rename records a tool whose model-visible name differs from its name on the server.
type Rename struct {
	Remote string `json:"remote"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ToolProblem records something wrong with one tool of a server: a tool skipped because its
// inputSchema is not an object, a schema that does not compile (validation off for that tool),
// malformed MCP Apps metadata.
type ToolProblem struct {
	Tool    string `json:"tool"`
	Problem string `json:"problem"`
	// Skipped says the tool was dropped; otherwise it is still offered.
	Skipped bool `json:"skipped,omitempty"`
}

// ServerStatus is the outcome of one server's start-up, for operators (mcpbridge probe) and
// for hosts that surface server health. Err is nil when the server is up.
//
// ProtocolVersion and Negotiation say which protocol version the server got and how, e.g.
// "2026-07-28 (server/discover)" or "2025-11-25 (initialize after server/discover failed:
// Method not found (-32601))". The bridge speaks every version go-sdk v1.8.0 does
// (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) and negotiates per server: it
// offers 2026-07-28 through server/discover (so the first request already carries
// MCP-Protocol-Version, the _meta protocol version and client info, and the SEP-2243
// Mcp-Method and Mcp-Name headers), and falls back to initialize with 2025-11-25 when the
// server does not speak it. Legacy servers stay prompt: a discover answered with an error
// falls back on the same connection at once; one that goes unanswered gives up after a
// quarter of the connect timeout (minDiscoverWait to maxDiscoverWait, see Limits); a stdio
// server that exits on it is started again with 2025-11-25; a server that needed the
// fallback skips discover on redials. A -32022 "unsupported protocol version" error listing
// the server's versions is retried with the newest version both sides speak; Streamable
// HTTP falls back to legacy SSE only when the endpoint refuses the way an SSE server does (a
// 400, 404 or 405 without a JSON-RPC error body), so other JSON-RPC errors surface as
// themselves. ServerConfig.ProtocolVersion (protocolVersion in a servers file) pins a
// version for an odd server.
//
// With 2026-07-28, tools whose x-mcp-header markers are invalid are dropped (as the
// specification requires; probe lists them as problems), tool arguments marked with
// x-mcp-header are mirrored into Mcp-Param-* headers, resultType is honoured, multi-round-trip
// results are followed, and tool-list changes arrive through subscriptions/listen as well as
// the older notification. When Connect starts several servers, each opens its
// subscriptions/listen listenHoldMax after its tools are listed rather than before (so that
// the servers' start-ups do not wait on each other's subscriptions), and the subscription's
// acknowledgement re-lists the server once, so a change made in between is not lost. Every
// request carries the client's capabilities in its _meta; a tools/call declares the MCP Apps
// extension only when it calls an App tool and the tasks extension only to a server that
// offers tasks (the listing and go-sdk's other requests declare both).
type ServerStatus struct {
	ID              string        `json:"id"`
	Transport       string        `json:"transport,omitempty"` // a Type constant: the transport that worked or failed last
	Err             *ServerError  `json:"-"`
	Timings         []PhaseTiming `json:"timings,omitempty"`
	ServerName      string        `json:"serverName,omitempty"`
	ServerVersion   string        `json:"serverVersion,omitempty"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
	// Negotiation says how ProtocolVersion was reached: "server/discover", "initialize after
	// server/discover failed: ...", "pinned by the server's protocolVersion", ...
	Negotiation string `json:"negotiation,omitempty"`
	// Instructions are the server's instructions from initialize or server/discover,
	// cleaned (see Server.Instructions). Untrusted text.
	Instructions string `json:"instructions,omitempty"`
	// ModelTools are the server's own names of the tools it offers the model (after filters
	// and visibility, before renaming), in listing order. Server.Tools gives the final tools.
	ModelTools []string `json:"modelTools,omitempty"`
	// AppOnly are the remote names of tools hidden from the model by _meta.ui.visibility; they
	// stay callable by MCP Apps through the proxy.
	AppOnly  []string      `json:"appOnly,omitempty"`
	Renamed  []Rename      `json:"renamed,omitempty"`
	Problems []ToolProblem `json:"problems,omitempty"`
	// Auth is the server's OAuth grant (nil without ServerConfig.Auth): type, expiry of the
	// access token, whether a refresh token is kept. Never a secret.
	Auth *AuthStatus `json:"auth,omitempty"`
	// Stderr is the tail of a stdio server's stderr (empty for HTTP servers).
	Stderr string `json:"stderr,omitempty"`
	// NonProtocolLines counts the lines the live session's stdio server wrote on stdout
	// that were not JSON-RPC messages (banners, log lines). They are skipped and logged at
	// Warn; a count above zero is a bug for the server's author (logs belong on stderr).
	NonProtocolLines int64 `json:"nonProtocolLines,omitempty"`
	// Elicitations counts the server's requests for user input (Options.OnElicitation)
	// so far.
	Elicitations int `json:"elicitations,omitempty"`
	// Tasks describes what the server offers for MCP tasks: "2025-11-25 tasks (tools/call,
	// cancel)", "extension io.modelcontextprotocol/tasks", or "" for nothing.
	Tasks string `json:"tasks,omitempty"`
	// TaskTools are the server's tools that declare MCP task support
	// (execution.taskSupport "required" or "optional"), by name.
	TaskTools []TaskTool `json:"taskTools,omitempty"`
	// Retries counts the starts made after the token store alone failed Connect's (see Set).
	Retries int `json:"retries,omitempty"`
}
