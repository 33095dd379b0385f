package bridge

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge/skills"
	itel "github.com/ttalk/mcpbridge/internal/telemetry"
)

// Options tunes Connect and Dial. A nil *Options and zero fields mean the documented defaults.
type Options struct {
	// Logger receives warnings (skipped servers, renamed tools, uncompilable schemas) and debug
	// lines (server stderr, with server=<ID>). Default: slog.Default(), so a skipped server is
	// never silent. Use slog.New(slog.DiscardHandler) for silence.
	Logger *slog.Logger
	// ConnectTimeout bounds one server's start-up: spawn or dial, initialize and every
	// tools/list page. Default DefaultConnectTimeout (Limits), which survives `npx -y` cold
	// starts. A server's own ServerConfig.ConnectTimeout wins. The caller's ctx deadline is
	// always an upper bound.
	ConnectTimeout time.Duration
	// CallTimeout bounds each tools/call unless the caller's ctx has an earlier deadline.
	// Default DefaultCallTimeout (Limits). ServerConfig.CallTimeout wins.
	CallTimeout time.Duration
	// MaxResultBytes caps the text a Handler returns (head and tail kept, with a marker
	// saying how much was cut). Default DefaultMaxResultBytes (Limits); <0 means no cap.
	MaxResultBytes int

	// AlwaysPrefix names every tool "<serverID>__<name>" rather than only on a clash.
	AlwaysPrefix bool
	// DisableValidation turns off argument validation against each tool's inputSchema.
	DisableValidation bool
	// DisableAppsExtension stops advertising the MCP Apps client capability
	// (extensions["io.modelcontextprotocol/ui"]).
	DisableAppsExtension bool
	// OnAppResult, when set, is called after every successful Handler call of an MCP App
	// tool with the activity a frontend renderer reads. It runs on the caller's goroutine
	// before the Handler returns.
	OnAppResult func(ctx context.Context, activity apps.Activity)
	// OnToolsChanged, when set, is called after a server announced a changed tool list and
	// the bridge re-listed it, or joined a Set late (see ToolsChange), from a background
	// goroutine. Its ctx ends when the server is closed.
	OnToolsChanged func(ctx context.Context, change ToolsChange)
	// OnStatus, when set, is called once per configured server as soon as its start-up
	// finished (successfully or not), from the goroutine that dialled it, with the ctx given
	// to Connect or Dial (carrying the server's connect span when tracing); once more, on
	// the retry's ctx, when a server the token store failed stops being retried (see Set).
	OnStatus func(ctx context.Context, status ServerStatus)
	// UIResourceCacheTTL, when positive, caches ui:// resources read through
	// Server.ReadResource and Set.Proxy for that long (at most maxUICache per server, see
	// Limits; emptied when a session is redialled). MCP Apps hosts may prefetch and cache UI resources.
	UIResourceCacheTTL time.Duration
	// HTTPClient is the base client for http and sse servers, for a host's own TLS settings,
	// proxy or tracing transport. Its Transport (nil: http.DefaultTransport) is wrapped, never
	// modified: configured headers, raw schema capture and secret redaction still apply on
	// top of it. Leave its Timeout zero: a Timeout would cut the long-lived SSE streams.
	// Default: a client over http.DefaultTransport keeping more idle connections per host
	// (transport.maxIdlePerHost in Limits).
	HTTPClient *http.Client
	// TokenStore keeps OAuth tokens (ServerConfig.Auth). Default: DefaultTokenStore(), a 0600
	// file under the user's config directory.
	TokenStore TokenStore
	// Authorizer performs the interactive OAuth step. nil (the default): Connect never waits
	// for a person; a server without a usable token is skipped with ErrNeedsLogin.
	Authorizer *Authorizer
	// ClientInfo is sent in initialize. Default: {Name: "mcpbridge", Version: <module version>}.
	ClientInfo *mcp.Implementation
	// OnElicitation, when set, answers a server's request for input from the user
	// (elicitation, form and URL mode), whether it arrives as an elicitation/create request
	// or inside a 2026-07-28 multi-round-trip tool call; the bridge then advertises the
	// elicitation capability. See ElicitRequest. Without it the capability is not advertised
	// and a server that asks anyway gets an "unsupported" error at once; a tool call that
	// needs input fails with an error saying so, except a 2026-07-28 task's input request,
	// which is declined (tasks/update) for the server to decide. Defaults the requested schema declares are
	// filled in for fields the answer leaves out (SEP-1034); a multi-round-trip call is
	// retried with a new request id and the server's requestState.
	OnElicitation func(ctx context.Context, req *ElicitRequest) (*mcp.ElicitResult, error)

	// Tasks is the task mode of servers whose ServerConfig.Tasks is empty: when tool calls
	// run as MCP tasks (see TaskMode). Default TasksAuto.
	Tasks TaskMode
	// TaskTimeout bounds a tool call that runs as an MCP task, from the call to its result
	// (each request of it stays bounded by CallTimeout), and is the TTL the bridge asks the
	// server to keep the task for. Default DefaultTaskTimeout (Limits).
	// ServerConfig.TaskTimeout wins.
	TaskTimeout time.Duration
	// OnTaskStatus, when set, is called for each MCP task the bridge follows (a tool call
	// that runs as a task, Server.AwaitTask) whenever its status or status message changed,
	// on the goroutine following the task (a slow callback delays the polling), with the
	// ctx of the call.
	OnTaskStatus func(ctx context.Context, task Task)

	// MaxMessageBytes caps one message a server sends, on every transport: a stdio line, an
	// HTTP response body, an SSE event. A server that sends more loses its session: the
	// request fails naming the limit and the next one redials. Default
	// DefaultMaxMessageBytes (Limits); <0 means no cap.
	MaxMessageBytes int
	// NudgeAfter is how long a request to a stdio server may go unanswered, with nothing
	// from the server meanwhile, before the bridge writes the server a ping: an answer a
	// server holds until its next input line is let go, and the ping's answer wakes the
	// bridge's reader whatever held the call; it pings again at most once per NudgeAfter while that lasts, and
	// the ping's answer never reaches a caller. A server that is really hung still fails
	// the call at CallTimeout. Default DefaultNudgeAfter (Limits); <0 turns it off.
	NudgeAfter time.Duration
	// MaxListTools caps the tools one server may list, over all pages; a longer listing fails
	// the server (or the re-list) in the tools/list phase. Default DefaultMaxListTools (Limits).
	MaxListTools int
	// MaxListBytes caps the raw bytes of one server's tool definitions, over all pages.
	// Default DefaultMaxListBytes (Limits).
	MaxListBytes int64
	// MaxSchemaCost caps the worst-case validation work of one schema (inputSchema or
	// outputSchema): the subschema applications for one value, each $ref target and allOf,
	// anyOf and oneOf branch counted every time it is reached. A schema over it is not
	// compiled: its tool is offered without validation (the server still validates), with a
	// ToolProblem. Default DefaultMaxSchemaCost (Limits).
	MaxSchemaCost int
	// MaxSchemaNodes caps the subschemas of one schema, which bounds compile time (the
	// validator library compiles in time quadratic in them). Over it, as for MaxSchemaCost.
	// Default DefaultMaxSchemaNodes (Limits).
	MaxSchemaNodes int
	// MaxDescriptionBytes caps one tool's description as the model gets it
	// (Tool.Description): a longer one keeps its head (cut on a UTF-8 boundary) and a marker
	// saying how much was cut, with a ToolProblem. Default DefaultMaxDescriptionBytes
	// (Limits); <0 means no cap.
	MaxDescriptionBytes int

	// ProxyAccess lists the Host header values and browser origins Set.ProxyHandler accepts
	// besides loopback ones (see apps.HandlerOptions). The zero value accepts loopback only.
	ProxyAccess apps.HandlerOptions

	// BeforeCall, when set, runs before every tool call (Handler, Server.CallTool, an App's
	// tools/call through Set.Proxy; see Call.Origin), after the arguments were checked and,
	// for Handlers, validated. Returning nil lets the call go ahead; Deny(reason) refuses it
	// with a *DeniedError whose text the model reads; any other error fails the call. A
	// refused call never reaches the server. The hook may block, for example to ask a human:
	// its ctx carries the call timeout (CallTimeout, ServerConfig.CallTimeout; TaskTimeout
	// for a call that may run as an MCP task) and ends
	// with the caller's ctx and with Close, and the call returns when it ends even if the
	// hook does not. It runs on its own goroutine (a panic fails the call, logged) and may
	// be called concurrently.
	BeforeCall func(ctx context.Context, call *Call) error
	// AfterCall, when set, runs after every tool call with its outcome, duration and sizes
	// (for audit logs and metrics), including calls refused before reaching the server
	// (invalid arguments, denials). It runs on the caller's goroutine before the call
	// returns and may be called concurrently. Its ctx is live whatever the outcome (a
	// timeout, a cancellation, Close): it has the call's values (its span, per-call
	// headers) but not its cancellation, and a deadline of the call timeout of its own, so
	// an audit hook can write with it.
	AfterCall func(ctx context.Context, call *Call, end *CallEnd)
	// Skills turns on the MCP Skills extension (io.modelcontextprotocol/skills): the bridge
	// declares it, lists each offering server's skills at assembly (metadata only) and
	// offers the model <prefix>__load_skill and <prefix>__read_skill_file for a server with
	// skills (see Server.Skills, SkillsPrompt, package skills).
	Skills bool
	// ApproveSkill, when set, is asked before a skill tool reads a skill's file into the
	// model's context (req.Path "" for SKILL.md), after BeforeCall. nil approves; an error
	// (Deny(reason) or any other) refuses with a *DeniedError whose reason the model reads,
	// and nothing is read. It may block to ask a human; its ctx carries the call timeout.
	ApproveSkill func(ctx context.Context, req skills.Request) error
	// TracerProvider and MeterProvider, when set, receive the bridge's spans and metrics
	// (see "Tracing" in the package doc). nil means the global providers
	// (otel.SetTracerProvider, otel.SetMeterProvider); while no provider is installed the
	// bridge records nothing and calls cost nothing extra.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Propagator writes a call's trace context into the request's params._meta. nil means
	// the global propagator, or W3C trace context and baggage when the global one writes
	// nothing.
	Propagator propagation.TextMapPropagator
	// Users makes the set serve many users, each with their own grants and sessions on
	// AuthOAuth servers (see WithUser and UserOptions). nil: one grant per server.
	Users *UserOptions
}

// options is Options with every default filled in; Connect copies the caller's Options once.
type options struct {
	Options
	users  UserOptions // Options.Users (zero when nil) with the table's defaults filled in
	logger *slog.Logger
	tel    *itel.Telemetry
}

func resolve(o *Options) *options {
	r := &options{}
	if o != nil {
		r.Options = *o
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	r.logger = r.Logger
	r.tel = itel.New(r.TracerProvider, r.MeterProvider, r.Propagator, moduleVersion()) // OpenTelemetry: "Tracing" in doc.go
	if r.Users != nil {
		r.users = *r.Users
	}
	fillLimits(r)
	if r.ClientInfo == nil {
		r.ClientInfo = &mcp.Implementation{Name: "mcpbridge", Version: moduleVersion()}
	}
	return r
}

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/ttalk/mcpbridge" && d.Version != "" {
				return d.Version
			}
		}
		if bi.Main.Path == "github.com/ttalk/mcpbridge" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}

func (o *options) connectTimeout(c ServerConfig) time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return o.ConnectTimeout
}

func (o *options) callTimeout(c ServerConfig) time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return o.CallTimeout
}
