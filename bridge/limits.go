package bridge

import (
	"github.com/ttalk/mcpbridge/bridge/config"
	"time"

	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/dpop"
	"github.com/ttalk/mcpbridge/internal/grant"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/results"
	"github.com/ttalk/mcpbridge/transport"
)

// This file is the one place that says what the bridge bounds. Every limit is a constant
// below and a row of limitTable; resolve fills the Options defaults from the table, and the
// "Limits" section of the package doc is generated from it (TestLimitsDocumented fails when
// they drift; `go test -run TestLimitsDocumented -update ./bridge` rewrites the section).

// Defaults used when Options (and ServerConfig, for the timeouts) leave a field zero.
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	// DefaultTaskTimeout bounds a tool call that runs as an MCP task, from the call to the
	// result.
	DefaultTaskTimeout    = 10 * time.Minute
	DefaultMaxResultBytes = results.DefaultMaxBytes

	DefaultMaxMessageBytes = transport.DefaultMaxMessageBytes // one message: stdio line, HTTP body, SSE event
	DefaultMaxListTools    = 10_000                           // tools in one server's listing, all pages
	DefaultMaxListBytes    = 32 << 20                         // raw bytes of one server's listing, all pages

	// DefaultMaxSchemaCost is the default worst-case number of subschema applications for one
	// instance location: $ref targets and allOf/anyOf/oneOf branches counted each time they
	// are reached, as if every branch were taken.
	DefaultMaxSchemaCost = 100_000
	// DefaultMaxSchemaNodes is the default cap on the subschemas of one schema, which bounds
	// compile time (quadratic in the library): about 0.5 s at the cap on a busy machine.
	DefaultMaxSchemaNodes = 5_000

	// MaxInstructionsBytes bounds the instructions kept per server (Server.Instructions):
	// longer text is cut at a rune boundary and ends with a note saying how much was cut.
	MaxInstructionsBytes = 16 << 10

	// DefaultMaxDescriptionBytes is the default cap on one tool's description as the model
	// gets it.
	DefaultMaxDescriptionBytes = 8 << 10
)

// Fixed limits: no option changes them. Those of schema guarding and OAuth are declared in
// their packages (internal/schemaguard, bridge/auth, bridge/config), which cannot import this one, and
// listed in limitTable below.
const (
	maxListPages        = 1000             // pages of one tools/list
	maxNameLen          = 64               // a tool name: the longest every major model API accepts
	maxUICache          = 32               // cached ui:// resources per server
	stderrLogTail       = 2048             // a stdio server's stderr tail in a failure's log line
	maxPendingCallbacks = 64               // OnToolsChanged callbacks waiting behind a slow one
	sessionClose        = 5 * time.Second  // closing one session beyond the transport's own bound
	maxBackoff          = 30 * time.Second // between redials of a crash-looping server
	maxDiscoverWait     = 10 * time.Second // server/discover before falling back to initialize

	// MCP tasks (taskrun.go, taskwire.go).
	minPollInterval     = 250 * time.Millisecond // between tasks/get, whatever pollInterval says
	maxPollInterval     = 30 * time.Second       // between tasks/get, whatever pollInterval says
	maxBackoffPoll      = 5 * time.Second        // between tasks/get when the server gives no pollInterval
	maxPollFailures     = 3                      // tasks/get in a row that fail before giving up
	cancelWait          = 5 * time.Second        // the tasks/cancel sent when giving up on a task
	maxTaskIDBytes      = 1024                   // a task ID
	maxStatusMsgBytes   = 4096                   // a task's statusMessage, or a failed task's error message
	maxInputKeyBytes    = 256                    // a key of a task's inputRequests
	maxInputRequests    = 16                     // inputRequests in one tasks/get answer
	maxInputKeysPerTask = 64                     // distinct inputRequests keys over a task's life
	maxRecentTasks      = 256                    // task IDs a session remembers to catch one handed out twice
)

// limitUnit says how a limit's value reads.
type limitUnit uint8

const (
	unitCount limitUnit = iota
	unitBytes
	unitDuration
)

// limit is one row of limitTable.
type limit struct {
	name   string         // the constant holding the value
	option string         // the Options field that changes it; "" when fixed
	value  int64          // a count, bytes, or a duration in nanoseconds
	unit   limitUnit      // how value reads
	bounds string         // what it bounds
	over   string         // what happens past it
	fill   func(*Options) // resolve: puts the default into an unset field; nil when fixed
}

// limitTable lists every limit, options first.
var limitTable = []limit{
	{
		name: "DefaultConnectTimeout", option: "ConnectTimeout", value: int64(DefaultConnectTimeout), unit: unitDuration,
		bounds: "one server's start-up: spawn or dial, initialize and every tools/list page (ServerConfig.ConnectTimeout wins; the caller's ctx deadline is an upper bound)",
		over:   "the server is skipped, the error names the phase; schemas not compiled in time are compiled on first use",
		fill:   fillPositive(func(o *Options) *time.Duration { return &o.ConnectTimeout }, DefaultConnectTimeout),
	},
	{
		name: "DefaultCallTimeout", option: "CallTimeout", value: int64(DefaultCallTimeout), unit: unitDuration,
		bounds: "one tool call, our own work in it included (compiling, validating arguments and structuredContent), unless ctx ends earlier (ServerConfig.CallTimeout wins)",
		over:   "the call fails with the deadline error; a compile that outlives it finishes in the background and serves the next call",
		fill:   fillPositive(func(o *Options) *time.Duration { return &o.CallTimeout }, DefaultCallTimeout),
	},
	{
		name: "DefaultTaskTimeout", option: "TaskTimeout", value: int64(DefaultTaskTimeout), unit: unitDuration,
		bounds: "a tool call that runs as an MCP task, from the call to its result (each request of it stays bounded by CallTimeout; ServerConfig.TaskTimeout wins); also the TTL asked of the server",
		over:   "the call fails with the deadline error and the task is cancelled on the server (tasks/cancel)",
		fill:   fillPositive(func(o *Options) *time.Duration { return &o.TaskTimeout }, DefaultTaskTimeout),
	},
	{
		name: "DefaultMaxResultBytes", option: "MaxResultBytes", value: DefaultMaxResultBytes, unit: unitBytes,
		bounds: "the text a Handler returns (<0: no cap)",
		over:   "head and tail are kept with a marker saying how much was cut",
		fill:   fillNonZero(func(o *Options) *int { return &o.MaxResultBytes }, DefaultMaxResultBytes),
	},
	{
		name: "DefaultMaxMessageBytes", option: "MaxMessageBytes", value: DefaultMaxMessageBytes, unit: unitBytes,
		bounds: "one message a server sends: a stdio line, an HTTP response body (JSON or error body), an SSE event (<0: no cap)",
		over:   "the body is cut at the limit (an endless body stops there; memory stays at a few copies of the limit), the session is dropped and the request fails naming the limit (transport.ErrMessageTooLarge); the next call redials",
		fill:   fillNonZero(func(o *Options) *int { return &o.MaxMessageBytes }, DefaultMaxMessageBytes),
	},
	{
		name: "DefaultMaxListTools", option: "MaxListTools", value: DefaultMaxListTools, unit: unitCount,
		bounds: "tools in one server's listing, all pages",
		over:   "the server (or the re-list) fails in phase tools/list naming the limit",
		fill:   fillPositive(func(o *Options) *int { return &o.MaxListTools }, DefaultMaxListTools),
	},
	{
		name: "DefaultMaxListBytes", option: "MaxListBytes", value: DefaultMaxListBytes, unit: unitBytes,
		bounds: "raw bytes of one server's tool definitions, all pages",
		over:   "as for MaxListTools",
		fill:   fillPositive(func(o *Options) *int64 { return &o.MaxListBytes }, DefaultMaxListBytes),
	},
	{
		name: "DefaultMaxSchemaCost", option: "MaxSchemaCost", value: DefaultMaxSchemaCost, unit: unitCount,
		bounds: "worst-case validation work of one schema: subschema applications per value, each $ref target and allOf/anyOf/oneOf branch counted every time it is reached (a 40-level allOf chain is 2^40)",
		over:   "the schema is not compiled: its tool is offered without validation (the server still validates), with a ToolProblem that probe shows",
		fill:   fillPositive(func(o *Options) *int { return &o.MaxSchemaCost }, DefaultMaxSchemaCost),
	},
	{
		name: "DefaultMaxSchemaNodes", option: "MaxSchemaNodes", value: DefaultMaxSchemaNodes, unit: unitCount,
		bounds: "subschemas in one schema, which bounds compile time (the validator compiles in time quadratic in them: 30,000 took a minute)",
		over:   "as for MaxSchemaCost",
		fill:   fillPositive(func(o *Options) *int { return &o.MaxSchemaNodes }, DefaultMaxSchemaNodes),
	},
	{
		name: "DefaultMaxDescriptionBytes", option: "MaxDescriptionBytes", value: DefaultMaxDescriptionBytes, unit: unitBytes,
		bounds: "one tool's description as the model gets it (<0: no cap)",
		over:   "the head is kept (cut on a UTF-8 boundary) with a marker saying how much was cut, and a ToolProblem",
		fill:   fillNonZero(func(o *Options) *int { return &o.MaxDescriptionBytes }, DefaultMaxDescriptionBytes),
	},
	{
		name: "wire.MaxMessageDepth", value: wire.MaxMessageDepth, unit: unitCount,
		bounds: "nesting of one JSON-RPC message (go-sdk decodes no deeper)",
		over:   "the request that message answers fails at once (a tools/list with a schema nested that deep fails the server in phase tools/list)",
	},
	{
		name: "maxLoggedAppData", value: maxLoggedAppData, unit: unitBytes,
		bounds: "the data of an MCP App's notifications/message written to the log (its logger name: 128 bytes, its level: 32)",
		over:   "the head is logged, with the data's size (dataBytes)",
	},
	{
		name: "maxListPages", value: maxListPages, unit: unitCount,
		bounds: "pages of one tools/list (a repeated cursor also ends it)",
		over:   "as for MaxListTools",
	},
	{
		name: "MaxInstructionsBytes", value: MaxInstructionsBytes, unit: unitBytes,
		bounds: "a server's instructions kept (Server.Instructions), after control characters are escaped",
		over:   "cut at a rune boundary, with a note saying how many bytes were cut",
	},
	{
		name: "schemaguard.MaxSchemaDepth", value: schemaguard.MaxSchemaDepth, unit: unitCount,
		bounds: "nesting of subschemas in one schema",
		over:   "as for MaxSchemaCost",
	},
	{
		name: "schemaguard.MaxSchemaBytes", value: schemaguard.MaxSchemaBytes, unit: unitBytes,
		bounds: "one schema decoded for validation",
		over:   "as for MaxSchemaCost, before any decoding work",
	},
	{
		name: "schemaguard.CallWorkFactor", value: schemaguard.CallWorkFactor, unit: unitCount,
		bounds: "work of one validation, as a multiple of MaxSchemaCost: worst-case cost times the values in the arguments (recursive schemas: times the argument depth, which may be at most MaxSchemaDepth)",
		over:   "that call's arguments are passed on unvalidated (debug log)",
	},
	{
		name: "schemaguard.MaxNullDepth", value: schemaguard.MaxNullDepth, unit: unitCount,
		bounds: "schema nesting looked through to decide whether a property accepts null",
		over:   "the null is kept and validation judges it",
	},
	{
		name: "maxNameLen", value: maxNameLen, unit: unitBytes,
		bounds: "a tool name given to the model",
		over:   "the name is cut with a short stable hash suffix",
	},
	{
		name: "maxUICache", value: maxUICache, unit: unitCount,
		bounds: "ui:// resources cached per server (Options.UIResourceCacheTTL)",
		over:   "expired entries make room; while all are live, resources are served uncached",
	},
	{
		name: "stderrLogTail", value: stderrLogTail, unit: unitBytes,
		bounds: "a stdio server's stderr quoted in a log line",
		over:   "only the tail is logged",
	},
	{
		name: "maxPendingCallbacks", value: maxPendingCallbacks, unit: unitCount,
		bounds: "OnToolsChanged callbacks waiting behind a slow one",
		over:   "the oldest waiting callback is dropped",
	},
	{
		name: "sessionClose", value: int64(sessionClose), unit: unitDuration,
		bounds: "closing one session, beyond the transport's own bound",
		over:   "Close stops waiting for it",
	},
	{
		name: "maxBackoff", value: int64(maxBackoff), unit: unitDuration,
		bounds: "the wait between redials of a server whose sessions keep dying",
		over:   "the backoff stops growing",
	},
	{
		name: "maxDiscoverWait", value: int64(maxDiscoverWait), unit: unitDuration,
		bounds: "the wait for an answer to server/discover: a quarter of the connect timeout, at least 1s, at most this",
		over:   "initialize is tried (a legacy server)",
	},
	{
		name: "config.MaxConfigSize", value: config.MaxConfigSize, unit: unitBytes,
		bounds: "a servers file",
		over:   "LoadConfig fails naming the file",
	},
	{
		name: "config.NodeBudget", value: config.NodeBudget, unit: unitCount,
		bounds: "YAML nodes visited in one servers file, aliases expanded",
		over:   "LoadConfig fails naming the file",
	},
	{
		name: "config.MaxErrors", value: config.MaxErrors, unit: unitCount,
		bounds: "problems one servers file reports",
		over:   "the rest are counted in one summary line",
	},
	{
		name: "config.MaxTimeout", value: int64(config.MaxTimeout), unit: unitDuration,
		bounds: "a timeout written in a servers file",
		over:   "LoadConfig fails naming the server and the key",
	},
	{
		name: "config.MaxExpandDepth", value: config.MaxExpandDepth, unit: unitCount,
		bounds: "${VAR:-default} defaults nested in defaults in a servers file",
		over:   "LoadConfig fails naming the key",
	},
	{
		name: "minPollInterval", value: int64(minPollInterval), unit: unitDuration,
		bounds: "the shortest wait between polls of an MCP task (a server's pollInterval of 0 included)",
		over:   "the bridge waits this long",
	},
	{
		name: "maxPollInterval", value: int64(maxPollInterval), unit: unitDuration,
		bounds: "the longest wait between polls of an MCP task (a server's pollInterval of a year included); also the grace after a task's TTL",
		over:   "the bridge polls after this long; a task still running this long after its TTL fails with ErrTaskExpired",
	},
	{
		name: "maxBackoffPoll", value: int64(maxBackoffPoll), unit: unitDuration,
		bounds: "the wait between polls of a task whose server gives no pollInterval (from 500ms, growing by half while nothing changes)",
		over:   "the wait stops growing",
	},
	{
		name: "maxPollFailures", value: maxPollFailures, unit: unitCount,
		bounds: "tasks/get requests in a row that fail (timeouts, transport errors) while following a task",
		over:   "the call fails with the last error and the task is cancelled",
	},
	{
		name: "cancelWait", value: int64(cancelWait), unit: unitDuration,
		bounds: "the tasks/cancel the bridge sends when it gives up on a task",
		over:   "the bridge stops waiting for the answer",
	},
	{
		name: "maxTaskIDBytes", value: maxTaskIDBytes, unit: unitBytes,
		bounds: "a task ID (also: UTF-8 without control characters)",
		over:   "the task is refused as unusable (ErrUnknownTask for IDs a host passes)",
	},
	{
		name: "maxStatusMsgBytes", value: maxStatusMsgBytes, unit: unitBytes,
		bounds: "a task's statusMessage, and a failed task's error message",
		over:   "the text is cut, marked with an ellipsis",
	},
	{
		name: "maxInputKeyBytes", value: maxInputKeyBytes, unit: unitBytes,
		bounds: "a key of a task's inputRequests (2026-07-28 extension)",
		over:   "the task fails and is cancelled",
	},
	{
		name: "maxInputRequests", value: maxInputRequests, unit: unitCount,
		bounds: "input requests in one tasks/get answer",
		over:   "the task fails and is cancelled",
	},
	{
		name: "maxInputKeysPerTask", value: maxInputKeysPerTask, unit: unitCount,
		bounds: "distinct input requests over one task's life",
		over:   "the task fails and is cancelled",
	},
	{
		name: "maxRecentTasks", value: maxRecentTasks, unit: unitCount,
		bounds: "task IDs a session remembers, to catch a server handing one out twice",
		over:   "the oldest is forgotten",
	},
	{
		name: "auth.MaxTokenFile", value: auth.MaxTokenFile, unit: unitBytes,
		bounds: "the OAuth token file read into memory",
		over:   "reading the store fails naming the file",
	},
	{
		name: "auth.SaveTimeout", value: int64(auth.SaveTimeout), unit: unitDuration,
		bounds: "saving one refreshed OAuth token to the TokenStore (done off the token fetch, so a slow store never holds up a call; Close waits for it up to 5s)",
		over:   "the save is given up and logged; the token stays in use",
	},
	{
		name: "auth.MaxTokenResponse", value: auth.MaxTokenResponse, unit: unitBytes,
		bounds: "a token endpoint's answer (client credentials)",
		over:   "the rest is not read; the token request fails",
	},
	{
		name: "grant.MaxResponse", value: grant.MaxResponse, unit: unitBytes,
		bounds: "a token endpoint's or identity provider's answer, or an authorization server's metadata (workload identity, enterprise, DPoP discovery)",
		over:   "the request fails saying so",
	},
	{
		name: "grant.MaxToken", value: grant.MaxToken, unit: unitBytes,
		bounds: "a workload or ID token read from token_file, token_env or token_command",
		over:   "the grant fails naming the source",
	},
	{
		name: "grant.CommandTimeout", value: int64(grant.CommandTimeout), unit: unitDuration,
		bounds: "one run of a token_command",
		over:   "the command is stopped; the grant fails naming it",
	},
	{
		name: "dpop.MaxNonce", value: dpop.MaxNonce, unit: unitBytes,
		bounds: "a server's DPoP-Nonce; each kind of DPoP challenge (nonce, clock) is answered once per request",
		over:   "the nonce is ignored; a challenge without a usable nonce, or one already answered, fails the request with the reason",
	},
}

// fillPositive returns a fill that sets *field to def when it is zero or negative.
func fillPositive[T ~int | ~int64](field func(*Options) *T, def T) func(*Options) {
	return func(o *Options) {
		if p := field(o); *p <= 0 {
			*p = def
		}
	}
}

// fillNonZero returns a fill that sets *field to def when it is zero (negative means no cap).
func fillNonZero[T ~int | ~int64](field func(*Options) *T, def T) func(*Options) {
	return func(o *Options) {
		if p := field(o); *p == 0 {
			*p = def
		}
	}
}

// fillLimits puts every limit's default into the fields of o that are unset.
func fillLimits(o *Options) {
	for _, l := range limitTable {
		if l.fill != nil {
			l.fill(o)
		}
	}
}
