package bridge

import (
	"github.com/ttalk/mcpbridge/bridge/config"
	"time"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/bridge/skills"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/dpop"
	"github.com/ttalk/mcpbridge/internal/grant"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/internal/tasks"
	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/results"
	"github.com/ttalk/mcpbridge/transport"
)

// This file is the one place that says what the module bounds. Every limit is a row of
// limitTable: a constant below, or one declared in the package that uses it when that package
// cannot import this one (transport, internal/...), named by the row. resolve fills the
// Options defaults from the table. The list of limits below (the doc of the first const
// group: go doc bridge.DefaultConnectTimeout; the package doc's Limits section points here)
// has one item per row, which opens with the row's value as the table has it and says in
// words, written only there, what the limit bounds and what happens past it
// (TestLimitsDocumented fails when the list and the table drift; `go test -run
// TestLimitsDocumented -update ./bridge` rewrites the values and the wrapping). A row whose
// constant this package cannot even name (unexported elsewhere) carries its value and the
// package's directory, and TestLimitsDeclared checks the value against that declaration.

// Limits.
//
// Everything a server, a servers file or a token endpoint controls is bounded; past a limit that
// server (or that tool, or that file) loses, never the host. Options and UserOptions
// (Options.Users) fields change the first group (a zero field means the default); the rest are
// fixed.
//
//   - Options.ConnectTimeout, default 60s (DefaultConnectTimeout): one server's start-up: spawn or
//     dial, initialize and every tools/list page (ServerConfig.ConnectTimeout wins; the caller's
//     ctx deadline is an upper bound). Over it: the server is skipped, the error names the phase;
//     schemas not compiled in time are compiled on first use.
//   - Options.CallTimeout, default 60s (DefaultCallTimeout): one tool call, our own work in it
//     included (compiling, validating arguments and structuredContent), unless ctx ends earlier
//     (ServerConfig.CallTimeout wins). Over it: the call fails with the deadline error; a compile
//     that outlives it finishes in the background and serves the next call.
//   - Options.TaskTimeout, default 10 min (DefaultTaskTimeout): a tool call that runs as an MCP
//     task, from the call to its result (each request of it stays bounded by CallTimeout;
//     ServerConfig.TaskTimeout wins); also the TTL asked of the server. Over it: the call fails
//     with the deadline error and the task is cancelled on the server (tasks/cancel).
//   - Options.MaxResultBytes, default 100,000 bytes (DefaultMaxResultBytes): the text a Handler
//     returns (<0: no cap). Over it: head and tail are kept with a marker saying how much was cut.
//   - Options.MaxMessageBytes, default 16 MiB (DefaultMaxMessageBytes): one message a server sends:
//     a stdio line, an HTTP response body (JSON or error body), an SSE event (<0: no cap). Over it:
//     the body is cut at the limit (an endless body stops there; memory stays at a few copies of
//     the limit), the session is dropped and the request fails naming the limit
//     (transport.ErrMessageTooLarge); the next call redials.
//   - Options.NudgeAfter, default 2s (DefaultNudgeAfter): how long a request to a stdio server goes
//     unanswered, with no bytes from the server, before the bridge writes it a ping (a server
//     holding its answer until its next input line lets it go; the ping's answer never reaches a
//     caller); again at most once per interval while that lasts (<0: never). Over it: the server is
//     pinged; one that answers no ping is pinged at most 4 times, and its calls end at CallTimeout.
//   - Options.MaxListTools, default 10,000 (DefaultMaxListTools): tools in one server's listing,
//     all pages. Over it: the server (or the re-list) fails in phase tools/list naming the limit.
//   - Options.MaxListBytes, default 32 MiB (DefaultMaxListBytes): raw bytes of one server's tool
//     definitions, all pages. Over it: as for MaxListTools.
//   - Options.MaxSchemaCost, default 100,000 (DefaultMaxSchemaCost): worst-case validation work of
//     one schema: subschema applications per value, each $ref target and allOf/anyOf/oneOf branch
//     counted every time it is reached (a 40-level allOf chain is 2^40). Over it: the schema is not
//     compiled: its tool is offered without validation (the server still validates), with a
//     ToolProblem that probe shows.
//   - Options.MaxSchemaNodes, default 5,000 (DefaultMaxSchemaNodes): subschemas in one schema,
//     which bounds compile time (the validator compiles in time quadratic in them: 30,000 took a
//     minute). Over it: as for MaxSchemaCost.
//   - Options.MaxDescriptionBytes, default 8 KiB (DefaultMaxDescriptionBytes): one tool's
//     description as the model gets it (<0: no cap). Over it: the head is kept (cut on a UTF-8
//     boundary) with a marker saying how much was cut, and a ToolProblem.
//   - Options.Users.MaxSessions, default 1,000 (DefaultMaxUserSessions): the users one server keeps
//     state for: their OAuth handlers, sessions and per-user catalogues. Over it: the least
//     recently used idle user's state is dropped (its session closed); it is rebuilt on that user's
//     next call from the stored grant.
//   - Options.Users.IdleTimeout, default 10 min (DefaultUserIdleTimeout): how long a user's state
//     is kept unused. Over it: it is dropped, its session closed, when the server's users are next
//     looked at (any user's call).
//   - Options.Users.LoginTimeout, default 15 min (DefaultLoginTimeout): how long a started web
//     login waits for its callback (Set.CompleteLogin); also how long a LoginRelay holds it. Over
//     it: the login ends; its callback fails wrapping ErrLoginUnknown.
//   - Options.Users.MaxLoginFlows, default 10,000 (DefaultMaxLoginFlows): web logins waiting for
//     their callback, per server. Over it: starting another login fails saying how many wait.
//   - Options.Users.RefreshJitter, default 60s (DefaultRefreshJitter): how much earlier than its
//     expiry requires a grant in a store shared by replicas (a TokenLocker) may be refreshed, at
//     random, so grants that expire together are not refreshed together; at most half the token's
//     lifetime (<0: none).
//   - 2s (fixed, transport.DefaultGrace): how long closing a stdio server waits after SIGTERM to
//     its process group. Over it: the group is sent SIGKILL.
//   - 8 KiB (fixed, transport.DefaultStderrTailBytes): the tail of a stdio server's stderr kept for
//     errors (ServerError.Stderr) and probe. Over it: only the newest bytes are kept.
//   - 1,000 (fixed, wire.MaxMessageDepth): nesting of one JSON-RPC message (go-sdk decodes no
//     deeper). Over it: the request that message answers fails at once (a tools/list with a schema
//     nested that deep fails the server in phase tools/list).
//   - 2 KiB (fixed, maxLoggedAppData): the data of an MCP App's notifications/message written to
//     the log (its logger name: 128 bytes, its level: 32). Over it: the head is logged, with the
//     data's size (dataBytes).
//   - 1,000 (fixed, maxListPages): pages of one tools/list (a repeated cursor also ends it). Over
//     it: as for MaxListTools.
//   - 16 KiB (fixed, MaxInstructionsBytes): a server's instructions kept (Server.Instructions),
//     after control characters are escaped. Over it: cut at a rune boundary, with a note saying how
//     many bytes were cut.
//   - 64 (fixed, schemaguard.MaxSchemaDepth): nesting of subschemas in one schema. Over it: as for
//     MaxSchemaCost.
//   - 2 MiB (fixed, schemaguard.MaxSchemaBytes): one schema decoded for validation. Over it: as for
//     MaxSchemaCost, before any decoding work.
//   - 100 (fixed, schemaguard.CallWorkFactor): work of one validation, as a multiple of
//     MaxSchemaCost: worst-case cost times the values in the arguments (recursive schemas: times
//     the argument depth, which may be at most MaxSchemaDepth). Over it: that call's arguments are
//     passed on unvalidated (debug log).
//   - 16 (fixed, schemaguard.MaxNullDepth): schema nesting looked through to decide whether a
//     property accepts null. Over it: the null is kept and validation judges it.
//   - 64 bytes (fixed, catalog.MaxNameLen): a tool name given to the model. Over it: the name is
//     cut with a short stable hash suffix.
//   - 32 (fixed, maxUICache): ui:// resources cached per server (Options.UIResourceCacheTTL). Over
//     it: expired entries make room; while all are live, resources are served uncached.
//   - 2 KiB (fixed, stderrLogTail): a stdio server's stderr quoted in a log line. Over it: only the
//     tail is logged.
//   - 64 (fixed, session.MaxPendingCallbacks): OnToolsChanged callbacks waiting behind a slow one.
//     Over it: the oldest waiting callback is dropped.
//   - 5s (fixed, sessionClose): closing one session, beyond the transport's own bound. Over it:
//     Close stops waiting for it.
//   - 30s (fixed, maxBackoff): the wait between redials of a server whose sessions keep dying. Over
//     it: the backoff stops growing.
//   - 20 (fixed, session.MaxStoreRetries): background starts of a server only the token store
//     failed at Connect, on the redial backoff (7.5 min in all). Over it: it stays in Set.Failed.
//   - 10s (fixed, maxDiscoverWait): the wait for an answer to server/discover: a quarter of the
//     connect timeout, at least 1s, at most this. Over it: initialize is tried (a legacy server).
//   - 32 (fixed, maxDials): servers Connect starts at once (spawn or dial, handshake, listing).
//     Over it: a server waits for a place, and its connect timeout starts then.
//   - 8 MiB (fixed, config.MaxConfigSize): a servers file. Over it: LoadConfig fails naming the
//     file.
//   - 200,000 (fixed, config.NodeBudget): YAML nodes visited in one servers file, aliases expanded.
//     Over it: LoadConfig fails naming the file.
//   - 20 (fixed, config.MaxErrors): problems one servers file reports. Over it: the rest are
//     counted in one summary line.
//   - 1000h (fixed, config.MaxTimeout): a timeout written in a servers file. Over it: LoadConfig
//     fails naming the server and the key.
//   - 8 (fixed, config.MaxExpandDepth): ${VAR:-default} defaults nested in defaults in a servers
//     file. Over it: LoadConfig fails naming the key.
//   - 250ms (fixed, tasks.MinPollInterval): the shortest wait between polls of an MCP task (a
//     server's pollInterval of 0 included). Over it: the bridge waits this long.
//   - 30s (fixed, tasks.MaxPollInterval): the longest wait between polls of an MCP task (a server's
//     pollInterval of a year included); also the grace after a task's TTL. Over it: the bridge
//     polls after this long; a task still running this long after its TTL fails with
//     ErrTaskExpired.
//   - 5s (fixed, tasks.MaxBackoffPoll): the wait between polls of a task whose server gives no
//     pollInterval (from 500ms, growing by half while nothing changes). Over it: the wait stops
//     growing.
//   - 3 (fixed, tasks.MaxPollFailures): tasks/get requests in a row that fail (timeouts, transport
//     errors) while following a task. Over it: the call fails with the last error and the task is
//     cancelled.
//   - 5s (fixed, tasks.CancelWait): the tasks/cancel the bridge sends when it gives up on a task.
//     Over it: the bridge stops waiting for the answer.
//   - 1 KiB (fixed, tasks.MaxIDBytes): a task ID (also: UTF-8 without control characters). Over it:
//     the task is refused as unusable (ErrUnknownTask for IDs a host passes).
//   - 4 KiB (fixed, tasks.MaxStatusMsgBytes): a task's statusMessage, and a failed task's error
//     message. Over it: the text is cut, marked with an ellipsis.
//   - 256 bytes (fixed, tasks.MaxInputKeyBytes): a key of a task's inputRequests (2026-07-28
//     extension). Over it: the task fails and is cancelled.
//   - 16 (fixed, tasks.MaxInputRequests): input requests in one tasks/get answer. Over it: the task
//     fails and is cancelled.
//   - 64 (fixed, tasks.MaxInputKeysPerTask): distinct input requests over one task's life. Over it:
//     the task fails and is cancelled.
//   - 256 (fixed, tasks.MaxRecentTasks): task IDs a session remembers, to catch a server handing
//     one out twice. Over it: the oldest is forgotten.
//   - 16 (fixed, tasks.MaxEarlyNotices): task status notifications kept for tasks not followed yet
//     (one can come before the tools/call's answer is read). Over it: the oldest is forgotten.
//   - 16 (fixed, session.MaxTaskListens): task subscriptions a session holds open. Over it: polled.
//   - 1000h (fixed, tasks.MaxDuration): a task's ttl or pollInterval as the server gives it. Over
//     it: read as this (the poll interval is then bounded by maxPollInterval).
//   - 1,000 (fixed, skills.MaxSkillsPerServer): skills in one server's listing (Options.Skills),
//     all skills/list pages, or skill:// resources recognised without it. Over it: the server keeps
//     its tools but offers no skill, with a problem naming the limit.
//   - 100 (fixed, skills.MaxListPages): skills/list pages of one listing (a repeated cursor ends
//     it). Over it: as for skills.MaxSkillsPerServer.
//   - 512 (fixed, skills.MaxFilesPerSkill): files in one skill's manifest. Over it: the skill is
//     dropped from the listing, with a problem.
//   - 16 MiB (fixed, skills.MaxFileBytes): one skill file read (SKILL.md or a supporting file); the
//     text a model reads is cut far below by MaxResultBytes. Over it: a manifest size over it is
//     refused without reading; a read over it fails; nothing is loaded.
//   - 16 MiB (fixed, skills.MaxSkillBytes): a skill's files, the manifest's sizes summed (the
//     specification's per-skill limit, which hosts must support). Over it: the skill is not loaded,
//     with an error saying why.
//   - 16 KiB (fixed, skills.MaxFrontmatterBytes): a skill entry's frontmatter and a SKILL.md's YAML
//     frontmatter. Over it: the entry is dropped, or the load fails; nothing is loaded.
//   - 1 KiB (fixed, skills.MaxDescriptionBytes): a skill's description in the catalogue and the
//     skill index (the Agent Skills bound). Over it: the description is cut on a rune boundary.
//   - 2,000 (fixed, skills.DefaultIndexTokens): the skill index of SkillsPrompt when no cap is
//     given, in tokens. Over it: the remaining skills are left out with a line saying how many.
//   - 4 MiB (fixed, auth.MaxTokenFile): the OAuth token file read into memory. Over it: reading the
//     store fails naming the file.
//   - 30s (fixed, auth.SaveTimeout): saving one refreshed OAuth token to the TokenStore (done off
//     the token fetch, so a slow store never holds up a call; Close waits for it up to 5s). Over
//     it: the save is given up and logged; the token stays in use.
//   - 1 MiB (fixed, auth.MaxTokenResponse): a token endpoint's answer (client credentials). Over
//     it: the rest is not read; the token request fails.
//   - 1 MiB (fixed, grant.MaxResponse): a token endpoint's or identity provider's answer, or an
//     authorization server's metadata (workload identity, enterprise, DPoP discovery). Over it: the
//     request fails saying so.
//   - 64 KiB (fixed, grant.MaxToken): a workload or ID token read from token_file, token_env or
//     token_command. Over it: the grant fails naming the source.
//   - 30s (fixed, grant.CommandTimeout): one run of a token_command. Over it: the command is
//     stopped; the grant fails naming it.
//   - 512 bytes (fixed, dpop.MaxNonce): a server's DPoP-Nonce; each kind of DPoP challenge (nonce,
//     clock) is answered once per request. Over it: the nonce is ignored; a challenge without a
//     usable nonce, or one already answered, fails the request with the reason.
//   - 256 bytes (fixed, MaxUserIDBytes): a user ID (WithUser). Over it: the call fails wrapping
//     ErrInvalidUser.
//   - 4 KiB (fixed, auth.maxCallbackValue): the code, state and iss of a web login's callback
//     (Set.CompleteLogin). Over it: the callback is refused and the login ends.
//   - 200 bytes (fixed, auth.maxErrorText): an authorization server's error and error_description
//     quoted from a login's callback. Over it: the text is cut.
//   - 4 (fixed, redact.MaxCreds): the OAuth credentials (access tokens sent) a server remembers for
//     masking in its errors and stderr. Over it: the oldest is forgotten.
//   - 500ms (fixed, firstBackoff): the first wait before redialling a server whose session died; it
//     doubles on each failure up to maxBackoff.
//   - 1s (fixed, minDiscoverWait): the shortest wait for an answer to server/discover (see
//     maxDiscoverWait).
//   - 250ms (fixed, listenHoldMax): how long a server's subscriptions/listen is held after its
//     first listing. Over it: the listen is sent; a change the server announces meanwhile is caught
//     by one re-listing.
//   - 2s (fixed, session.ProgressLinger): how long a call's progress token stays routed after the
//     call returned (notifications go-sdk delivers after the response). Over it: later progress
//     notifications for it are dropped.
//   - 500ms (fixed, tasks.FirstPoll): the first wait before polling a task whose server gives no
//     pollInterval (then growing up to maxBackoffPoll).
//   - 2 KiB (fixed, results.MinErrorBytes): the smallest cap on a tool error's text (isError),
//     whatever MaxResultBytes says unless it is negative. Over it: the error keeps this much.
//   - 64 bytes (fixed, results.MinTruncateBytes): the smallest cap at which a cut text keeps both
//     head and tail around its marker; a smaller positive MaxResultBytes is raised to it. Over it:
//     the cap is raised to it.
//   - 4 (fixed, results.maxNesting): nesting of tool_result content followed in a result. Over it:
//     deeper content is shown as a placeholder.
//   - 4 MiB (fixed, apps.MaxRequestBytes): the body of an MCP App's proxy request
//     (Set.ProxyHandler). Over it: 413 Request Entity Too Large.
//   - 120 bytes (fixed, apps.maxQuoted): an App's untrusted string quoted into an error or problem
//     text. Over it: the quote is cut, marked after the closing quote.
//   - 300 bytes (fixed, transport.maxLastStderr): the last stderr line of an exited stdio server
//     quoted in its error (ProcessEnd.LastStderr). Over it: the line is cut, marked with an
//     ellipsis.
//   - 4 KiB (fixed, transport.maxLogLine): one stderr line of a stdio server as logged. Over it:
//     the line is cut and marked.
//   - 32 KiB (fixed, transport.maxStderrBuf): the buffer reading a stdio server's stderr (from 512
//     bytes, doubling). Over it: the buffer stops growing.
//   - 750ms (fixed, transport.killWait): how long closing a stdio server waits for its process
//     after SIGKILL. Over it: Close stops waiting.
//   - 250ms (fixed, transport.stderrWait): how long closing a stdio server then waits for its
//     stderr to reach EOF. Over it: Close stops waiting.
//   - 4,096 (fixed, transport.maxTaggedReads): environments read (Linux, /proc/<pid>/environ, only
//     of processes started since the server's) in one round of looking for a stdio server's
//     descendants that left its process group. Over it: the rest are not looked at.
//   - 256 (fixed, transport.maxTreeProcs): processes of a stdio server's tree looked at (Linux) to
//     tell whether npx is still installing its package, for a start-up that is slow. Over it: the
//     rest are not looked at; the message says only "still starting".
//   - 4,096 (fixed, transport.maxStatReads): /proc/<pid>/stat files read (Linux, only of processes
//     started since the server's) to find a stdio server's tree. Over it: the rest are not read.
//   - 64 (fixed, transport.maxIdlePerHost): idle HTTP connections kept per host by the default
//     client (Options.HTTPClient nil). Over it: more are closed after use.
//   - 64 MiB (fixed, wire.MaxCaptureBytes): one JSON response body or SSE event buffered to capture
//     raw tools/list definitions, or (with no per-message limit) to rewrite unknown content blocks
//     for go-sdk. Over it: it is passed on uncaptured, or as sent.
//   - 1 KiB (fixed, wire.maxCachedMeta): a result's _meta kept by the direct client's cache of
//     repeated values. Over it: it is decoded each time.
//   - 64 KiB (fixed, transport.maxErrorPeek): a refused initialize response read to tell a JSON-RPC
//     error from a legacy server's refusal. Over it: the rest is not looked at.
//   - 64 KiB (fixed, wire.maxErrorBody): the body of a failed HTTP response read for its JSON-RPC
//     error (direct client). Over it: the rest is not read.
//   - 5 (fixed, wire.maxResumes): reconnections of a direct call's event stream in a row without a
//     new event ID. Over it: the call fails.
//   - 30s (fixed, wire.maxRetryField): the wait a server's SSE retry field asks for before a stream
//     is resumed. Over it: 30s is waited.
//   - 30s (fixed, auth.refreshTimeout): one refresh of a grant in a shared store (a TokenLocker):
//     waiting for the lock, the store, the token endpoint. Over it: the refresh fails; the next
//     request tries again.
//   - 60s (fixed, auth.lockTTL): the lease of a grant's refresh lock in a shared store (longer than
//     a refresh may take). Over it: the lock lapses and another replica may refresh.
//   - 200 bytes (fixed, grant.maxDescribed): a token endpoint's error_description quoted in an
//     error. Over it: the text is cut.
//   - 64 KiB (fixed, dpop.maxErrorBody): the part of a DPoP 400 body read for its error code. Over
//     it: the rest is discarded.
//   - 32 (fixed, dpop.maxOrigins): servers whose DPoP nonce and clock are remembered. Over it: an
//     arbitrary one is forgotten.
//   - 24h (fixed, dpop.maxSkew): the clock difference up to which a server's Date is believed for
//     DPoP proofs (from 30s). Over it: the server's Date is not believed.
//   - 8 (fixed, schemaguard.maxMsgs): validation failures one invalid-arguments error lists. Over
//     it: the rest are counted ("and N more").
//   - 16 KiB (fixed, serve.maxCSPJSON): an App's declared csp (mcpbridge serve). Over it: the
//     restrictive default is used.
//   - 32 (fixed, serve.maxCSPSources): origins in one csp list of an App (mcpbridge serve). Over
//     it: the rest are ignored, with a problem.
//   - 256 bytes (fixed, serve.maxCSPSourceLen): one origin of an App's csp (mcpbridge serve). Over
//     it: it is ignored, with a problem.
//   - 1,000 bytes (fixed, serve.maxQueryBytes): a tool search query (mcpbridge serve, GET
//     /api/search). Over it: 400.
//   - 50 (fixed, serve.maxHits): tools one search answers with (mcpbridge serve). Over it: k is
//     lowered to it.
//   - 64 (fixed, serve.maxCallsShown): calls the page follows at once (mcpbridge serve). Over it:
//     another call is not followed.
//   - 50 (fixed, serve.maxStatusLines): status lines kept per call for the page (mcpbridge serve).
//     Over it: the oldest are dropped.
//   - 1,000 bytes (fixed, serve.maxLineBytes): one status line kept for the page (mcpbridge serve).
//     Over it: the line is cut, marked with an ellipsis.
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	// DefaultTaskTimeout bounds a tool call that runs as an MCP task, from the call to the
	// result.
	DefaultTaskTimeout    = 10 * time.Minute
	DefaultMaxResultBytes = results.DefaultMaxBytes

	DefaultMaxMessageBytes = transport.DefaultMaxMessageBytes // one message: stdio line, HTTP body, SSE event
	DefaultNudgeAfter      = transport.DefaultNudgeAfter      // a stdio request unanswered, the server quiet, before a ping
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

// Defaults used when UserOptions leave a field zero.
const (
	DefaultMaxUserSessions = 1000
	DefaultUserIdleTimeout = 10 * time.Minute
	DefaultLoginTimeout    = 15 * time.Minute
	DefaultMaxLoginFlows   = 10000
	DefaultRefreshJitter   = time.Minute
)

// MaxUserIDBytes bounds the length of a user ID.
const MaxUserIDBytes = 256

// Fixed limits: no option changes them. Those of schema guarding and OAuth are declared in
// their packages (internal/schemaguard, bridge/auth, bridge/config), which cannot import this one, and
// listed in limitTable below.
const (
	maxListPages    = 1000             // pages of one tools/list
	maxUICache      = 32               // cached ui:// resources per server
	stderrLogTail   = 2048             // a stdio server's stderr tail in a failure's log line
	sessionClose    = 5 * time.Second  // closing one session beyond the transport's own bound
	maxBackoff      = 30 * time.Second // between redials of a crash-looping server
	maxDiscoverWait = 10 * time.Second // server/discover before falling back to initialize
	maxDials        = 32               // servers Connect starts at once
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
	fill   func(*options) // resolve: puts the default into an unset field; nil when fixed
	// src is the directory (from the module root) of the package declaring name, for a
	// constant this package cannot refer to; value is then checked against it.
	src string
}

// limitTable lists every limit, options first.
var limitTable = []limit{
	{name: "DefaultConnectTimeout", option: "ConnectTimeout", value: int64(DefaultConnectTimeout), unit: unitDuration,
		fill: fillPositive(func(o *options) *time.Duration { return &o.ConnectTimeout }, DefaultConnectTimeout)},
	{name: "DefaultCallTimeout", option: "CallTimeout", value: int64(DefaultCallTimeout), unit: unitDuration,
		fill: fillPositive(func(o *options) *time.Duration { return &o.CallTimeout }, DefaultCallTimeout)},
	{name: "DefaultTaskTimeout", option: "TaskTimeout", value: int64(DefaultTaskTimeout), unit: unitDuration,
		fill: fillPositive(func(o *options) *time.Duration { return &o.TaskTimeout }, DefaultTaskTimeout)},
	{name: "DefaultMaxResultBytes", option: "MaxResultBytes", value: DefaultMaxResultBytes, unit: unitBytes,
		fill: fillNonZero(func(o *options) *int { return &o.MaxResultBytes }, DefaultMaxResultBytes)},
	{name: "DefaultMaxMessageBytes", option: "MaxMessageBytes", value: DefaultMaxMessageBytes, unit: unitBytes,
		fill: fillNonZero(func(o *options) *int { return &o.MaxMessageBytes }, DefaultMaxMessageBytes)},
	{name: "DefaultNudgeAfter", option: "NudgeAfter", value: int64(DefaultNudgeAfter), unit: unitDuration,
		fill: fillNonZero(func(o *options) *time.Duration { return &o.NudgeAfter }, DefaultNudgeAfter)},
	{name: "DefaultMaxListTools", option: "MaxListTools", value: DefaultMaxListTools, unit: unitCount,
		fill: fillPositive(func(o *options) *int { return &o.MaxListTools }, DefaultMaxListTools)},
	{name: "DefaultMaxListBytes", option: "MaxListBytes", value: DefaultMaxListBytes, unit: unitBytes,
		fill: fillPositive(func(o *options) *int64 { return &o.MaxListBytes }, DefaultMaxListBytes)},
	{name: "DefaultMaxSchemaCost", option: "MaxSchemaCost", value: DefaultMaxSchemaCost, unit: unitCount,
		fill: fillPositive(func(o *options) *int { return &o.MaxSchemaCost }, DefaultMaxSchemaCost)},
	{name: "DefaultMaxSchemaNodes", option: "MaxSchemaNodes", value: DefaultMaxSchemaNodes, unit: unitCount,
		fill: fillPositive(func(o *options) *int { return &o.MaxSchemaNodes }, DefaultMaxSchemaNodes)},
	{name: "DefaultMaxDescriptionBytes", option: "MaxDescriptionBytes", value: DefaultMaxDescriptionBytes, unit: unitBytes,
		fill: fillNonZero(func(o *options) *int { return &o.MaxDescriptionBytes }, DefaultMaxDescriptionBytes)},
	{name: "DefaultMaxUserSessions", option: "Users.MaxSessions", value: DefaultMaxUserSessions, unit: unitCount,
		fill: fillPositive(func(o *options) *int { return &o.users.MaxSessions }, DefaultMaxUserSessions)},
	{name: "DefaultUserIdleTimeout", option: "Users.IdleTimeout", value: int64(DefaultUserIdleTimeout), unit: unitDuration,
		fill: fillPositive(func(o *options) *time.Duration { return &o.users.IdleTimeout }, DefaultUserIdleTimeout)},
	{name: "DefaultLoginTimeout", option: "Users.LoginTimeout", value: int64(DefaultLoginTimeout), unit: unitDuration,
		fill: fillPositive(func(o *options) *time.Duration { return &o.users.LoginTimeout }, DefaultLoginTimeout)},
	{name: "DefaultMaxLoginFlows", option: "Users.MaxLoginFlows", value: DefaultMaxLoginFlows, unit: unitCount,
		fill: fillPositive(func(o *options) *int { return &o.users.MaxLoginFlows }, DefaultMaxLoginFlows)},
	{name: "DefaultRefreshJitter", option: "Users.RefreshJitter", value: int64(DefaultRefreshJitter), unit: unitDuration,
		fill: fillNonZero(func(o *options) *time.Duration { return &o.users.RefreshJitter }, DefaultRefreshJitter)},
	{name: "transport.DefaultGrace", value: int64(transport.DefaultGrace), unit: unitDuration},
	{name: "transport.DefaultStderrTailBytes", value: transport.DefaultStderrTailBytes, unit: unitBytes},
	{name: "wire.MaxMessageDepth", value: wire.MaxMessageDepth, unit: unitCount},
	{name: "maxLoggedAppData", value: maxLoggedAppData, unit: unitBytes},
	{name: "maxListPages", value: maxListPages, unit: unitCount},
	{name: "MaxInstructionsBytes", value: MaxInstructionsBytes, unit: unitBytes},
	{name: "schemaguard.MaxSchemaDepth", value: schemaguard.MaxSchemaDepth, unit: unitCount},
	{name: "schemaguard.MaxSchemaBytes", value: schemaguard.MaxSchemaBytes, unit: unitBytes},
	{name: "schemaguard.CallWorkFactor", value: schemaguard.CallWorkFactor, unit: unitCount},
	{name: "schemaguard.MaxNullDepth", value: schemaguard.MaxNullDepth, unit: unitCount},
	{name: "catalog.MaxNameLen", value: catalog.MaxNameLen, unit: unitBytes},
	{name: "maxUICache", value: maxUICache, unit: unitCount},
	{name: "stderrLogTail", value: stderrLogTail, unit: unitBytes},
	{name: "session.MaxPendingCallbacks", value: session.MaxPendingCallbacks, unit: unitCount},
	{name: "sessionClose", value: int64(sessionClose), unit: unitDuration},
	{name: "maxBackoff", value: int64(maxBackoff), unit: unitDuration},
	{name: "session.MaxStoreRetries", value: session.MaxStoreRetries, unit: unitCount},
	{name: "maxDiscoverWait", value: int64(maxDiscoverWait), unit: unitDuration},
	{name: "maxDials", value: maxDials, unit: unitCount},
	{name: "config.MaxConfigSize", value: config.MaxConfigSize, unit: unitBytes},
	{name: "config.NodeBudget", value: config.NodeBudget, unit: unitCount},
	{name: "config.MaxErrors", value: config.MaxErrors, unit: unitCount},
	{name: "config.MaxTimeout", value: int64(config.MaxTimeout), unit: unitDuration},
	{name: "config.MaxExpandDepth", value: config.MaxExpandDepth, unit: unitCount},
	{name: "tasks.MinPollInterval", value: int64(tasks.MinPollInterval), unit: unitDuration},
	{name: "tasks.MaxPollInterval", value: int64(tasks.MaxPollInterval), unit: unitDuration},
	{name: "tasks.MaxBackoffPoll", value: int64(tasks.MaxBackoffPoll), unit: unitDuration},
	{name: "tasks.MaxPollFailures", value: tasks.MaxPollFailures, unit: unitCount},
	{name: "tasks.CancelWait", value: int64(tasks.CancelWait), unit: unitDuration},
	{name: "tasks.MaxIDBytes", value: tasks.MaxIDBytes, unit: unitBytes},
	{name: "tasks.MaxStatusMsgBytes", value: tasks.MaxStatusMsgBytes, unit: unitBytes},
	{name: "tasks.MaxInputKeyBytes", value: tasks.MaxInputKeyBytes, unit: unitBytes},
	{name: "tasks.MaxInputRequests", value: tasks.MaxInputRequests, unit: unitCount},
	{name: "tasks.MaxInputKeysPerTask", value: tasks.MaxInputKeysPerTask, unit: unitCount},
	{name: "tasks.MaxRecentTasks", value: tasks.MaxRecentTasks, unit: unitCount},
	{name: "tasks.MaxEarlyNotices", value: tasks.MaxEarlyNotices, unit: unitCount},
	{name: "session.MaxTaskListens", value: session.MaxTaskListens, unit: unitCount},
	{name: "tasks.MaxDuration", value: int64(tasks.MaxDuration), unit: unitDuration},
	{name: "skills.MaxSkillsPerServer", value: skills.MaxSkillsPerServer, unit: unitCount},
	{name: "skills.MaxListPages", value: skills.MaxListPages, unit: unitCount},
	{name: "skills.MaxFilesPerSkill", value: skills.MaxFilesPerSkill, unit: unitCount},
	{name: "skills.MaxFileBytes", value: skills.MaxFileBytes, unit: unitBytes},
	{name: "skills.MaxSkillBytes", value: skills.MaxSkillBytes, unit: unitBytes},
	{name: "skills.MaxFrontmatterBytes", value: skills.MaxFrontmatterBytes, unit: unitBytes},
	{name: "skills.MaxDescriptionBytes", value: skills.MaxDescriptionBytes, unit: unitBytes},
	{name: "skills.DefaultIndexTokens", value: skills.DefaultIndexTokens, unit: unitCount},
	{name: "auth.MaxTokenFile", value: auth.MaxTokenFile, unit: unitBytes},
	{name: "auth.SaveTimeout", value: int64(auth.SaveTimeout), unit: unitDuration},
	{name: "auth.MaxTokenResponse", value: auth.MaxTokenResponse, unit: unitBytes},
	{name: "grant.MaxResponse", value: grant.MaxResponse, unit: unitBytes},
	{name: "grant.MaxToken", value: grant.MaxToken, unit: unitBytes},
	{name: "grant.CommandTimeout", value: int64(grant.CommandTimeout), unit: unitDuration},
	{name: "dpop.MaxNonce", value: dpop.MaxNonce, unit: unitBytes},
	{name: "MaxUserIDBytes", value: MaxUserIDBytes, unit: unitBytes},
	{name: "auth.maxCallbackValue", value: 4096, src: "bridge/auth", unit: unitBytes},
	{name: "auth.maxErrorText", value: 200, unit: unitBytes, src: "bridge/auth"},
	{name: "redact.MaxCreds", value: redact.MaxCreds, unit: unitCount},
	{name: "firstBackoff", value: int64(firstBackoff), unit: unitDuration},
	{name: "minDiscoverWait", value: int64(minDiscoverWait), unit: unitDuration},
	{name: "listenHoldMax", value: int64(listenHoldMax), unit: unitDuration},
	{name: "session.ProgressLinger", value: int64(session.ProgressLinger), unit: unitDuration},
	{name: "tasks.FirstPoll", value: int64(tasks.FirstPoll), unit: unitDuration},
	{name: "results.MinErrorBytes", value: results.MinErrorBytes, unit: unitBytes},
	{name: "results.MinTruncateBytes", value: results.MinTruncateBytes, unit: unitBytes},
	{name: "results.maxNesting", value: 4, unit: unitCount, src: "results"},
	{name: "apps.MaxRequestBytes", value: apps.MaxRequestBytes, unit: unitBytes},
	{name: "apps.maxQuoted", value: 120, unit: unitBytes, src: "apps"},
	{name: "transport.maxLastStderr", value: 300, unit: unitBytes, src: "transport"},
	{name: "transport.maxLogLine", value: 4 << 10, unit: unitBytes, src: "transport"},
	{name: "transport.maxStderrBuf", value: 32 << 10, unit: unitBytes, src: "transport"},
	{name: "transport.killWait", value: int64(750 * time.Millisecond), unit: unitDuration, src: "transport"},
	{name: "transport.stderrWait", value: int64(250 * time.Millisecond), unit: unitDuration, src: "transport"},
	{name: "transport.maxTaggedReads", value: 4096, unit: unitCount, src: "transport"},
	{name: "transport.maxTreeProcs", value: 256, unit: unitCount, src: "transport"},
	{name: "transport.maxStatReads", value: 4096, unit: unitCount, src: "transport"},
	{name: "transport.maxIdlePerHost", value: 64, unit: unitCount, src: "transport"},
	{name: "wire.MaxCaptureBytes", value: wire.MaxCaptureBytes, unit: unitBytes},
	{name: "wire.maxCachedMeta", value: 1 << 10, unit: unitBytes, src: "internal/wire"},
	{name: "transport.maxErrorPeek", value: 64 << 10, unit: unitBytes, src: "transport"},
	{name: "wire.maxErrorBody", value: 64 << 10, unit: unitBytes, src: "internal/wire"},
	{name: "wire.maxResumes", value: 5, unit: unitCount, src: "internal/wire"},
	{name: "wire.maxRetryField", value: int64(30 * time.Second), unit: unitDuration, src: "internal/wire"},
	{name: "auth.refreshTimeout", value: int64(30 * time.Second), unit: unitDuration, src: "bridge/auth"},
	{name: "auth.lockTTL", value: int64(60 * time.Second), unit: unitDuration, src: "bridge/auth"},
	{name: "grant.maxDescribed", value: 200, unit: unitBytes, src: "internal/grant"},
	{name: "dpop.maxErrorBody", value: 64 << 10, unit: unitBytes, src: "internal/dpop"},
	{name: "dpop.maxOrigins", value: 32, unit: unitCount, src: "internal/dpop"},
	{name: "dpop.maxSkew", value: int64(24 * time.Hour), unit: unitDuration, src: "internal/dpop"},
	{name: "schemaguard.maxMsgs", value: 8, unit: unitCount, src: "internal/schemaguard"},
	{name: "serve.maxCSPJSON", value: 16 << 10, unit: unitBytes, src: "internal/serve"},
	{name: "serve.maxCSPSources", value: 32, unit: unitCount, src: "internal/serve"},
	{name: "serve.maxCSPSourceLen", value: 256, unit: unitBytes, src: "internal/serve"},
	{name: "serve.maxQueryBytes", value: 1000, unit: unitBytes, src: "internal/serve"},
	{name: "serve.maxHits", value: 50, unit: unitCount, src: "internal/serve"},
	{name: "serve.maxCallsShown", value: 64, unit: unitCount, src: "internal/serve"},
	{name: "serve.maxStatusLines", value: 50, unit: unitCount, src: "internal/serve"},
	{name: "serve.maxLineBytes", value: 1000, unit: unitBytes, src: "internal/serve"},
}

// fillPositive returns a fill that sets *field to def when it is zero or negative.
func fillPositive[T ~int | ~int64](field func(*options) *T, def T) func(*options) {
	return func(o *options) {
		if p := field(o); *p <= 0 {
			*p = def
		}
	}
}

// fillNonZero returns a fill that sets *field to def when it is zero (negative means no cap).
func fillNonZero[T ~int | ~int64](field func(*options) *T, def T) func(*options) {
	return func(o *options) {
		if p := field(o); *p == 0 {
			*p = def
		}
	}
}

// fillLimits puts every limit's default into the fields of o (and of o.users) that are unset.
func fillLimits(o *options) {
	for _, l := range limitTable {
		if l.fill != nil {
			l.fill(o)
		}
	}
}
