package config

import (
	"fmt"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/transport"
)

// ServerConfig describes one MCP server. The zero value of every optional field means the
// documented default. ServerConfig is safe to log: its String, GoString and LogValue methods
// mask header values, environment values, the URL's userinfo, query values and bare query
// keys, and arguments that look like credentials (the value of --token=X, --api-key X,
// -H "Authorization: ...", NAME=X where NAME looks like a credential, URLs in arguments).
// A secret passed as a bare positional argument or after a short flag (-p X) cannot be told
// from an ordinary argument and is shown: pass secrets through Env.
type ServerConfig struct {
	// ID is the server's unique name: the map key in servers.yaml. It appears in logs and
	// errors, in collision prefixes (<ID>__<tool>) and in Set.Lookup.
	ID string
	// Type is "" (infer: stdio when Command is set, Streamable HTTP with SSE fallback when URL
	// is set), "stdio", "http" (Streamable HTTP) or "sse" (legacy HTTP+SSE).
	Type string
	// Command is the program to run for a stdio server; Args are its arguments. No shell is
	// involved.
	Command string
	Args    []string
	// Env is added to (not substituted for) the parent environment of a stdio server.
	Env map[string]string
	// Dir is the working directory of a stdio server; "" means the caller's.
	Dir string
	// URL is the endpoint of an http or sse server.
	URL string
	// Headers are sent on every HTTP request to an http or sse server (Authorization, ...).
	Headers map[string]string
	// Auth, when set, authorizes to a Streamable HTTP server with OAuth 2.1 (see auth.AuthConfig;
	// servers.yaml's auth block).
	Auth *auth.AuthConfig
	// InProcess, when set, reaches a server running in the same process: it is called for
	// every (re)dial and returns a fresh client-side transport, e.g. one end of
	// mcp.NewInMemoryTransports whose other end the server is already connected to.
	// Command and URL must then be empty; Type is "" or "inprocess".
	InProcess func() (mcp.Transport, error)

	// Required makes Connect fail (closing every other server) when this server cannot be
	// reached. By default a failing server is logged and skipped.
	Required bool
	// Prefix, when set, names every tool of this server "<Prefix>__<tool>" (sanitised), instead
	// of prefixing only on a clash.
	Prefix string
	// Include and Exclude are glob patterns (path.Match syntax) on the server's own tool
	// names. When Include is non-empty only matching tools are kept; then tools matching any
	// Exclude pattern are dropped.
	Include []string
	Exclude []string
	// Expose, when it holds ExposeResources ("resources") or ExposePrompts ("prompts"),
	// gives the model tools to list and read the server's resources or to list and get its
	// prompts (servers.yaml: expose: [resources, prompts]). They are named
	// "<Prefix or ID>__list_resources", "__read_resource", "__list_prompts", "__get_prompt",
	// validate their arguments like any tool and return flattened text. Off by default, so
	// the model's tool list does not change for existing configurations.
	Expose []string
	// Defer says whether a model API format that loads tools on demand (bridge/provider's
	// Options.Defer) keeps this server's tools out of the upfront list (true), always sends
	// them (false), or decides by its threshold (nil). servers.yaml: defer: true|false.
	Defer *bool

	// ConnectTimeout bounds start-up (spawn or dial, initialize and tools/list) for this
	// server; 0 means Options.ConnectTimeout.
	ConnectTimeout time.Duration
	// CallTimeout bounds each tools/call to this server unless the caller's context has an
	// earlier deadline; 0 means Options.CallTimeout.
	CallTimeout time.Duration
	// Tasks says when this server's tools run as MCP tasks (servers.yaml: tasks: auto,
	// always or never); "" means Options.Tasks.
	Tasks TaskMode
	// TaskTimeout bounds a tool call of this server that runs as an MCP task (servers.yaml:
	// timeouts: {task: 30m}); 0 means Options.TaskTimeout.
	TaskTimeout time.Duration

	// ProtocolVersion pins the MCP protocol version offered to this server (one of
	// mcp.SupportedProtocolVersions(), such as "2025-11-25" or "2026-07-28"); "" negotiates
	// (see Connect). Pinning a version before 2026-07-28 skips server/discover; pinning
	// 2026-07-28 gives up the fallback to initialize when discover goes unanswered.
	ProtocolVersion string

	// Source says where the server was defined ("servers.yaml:12"); LoadConfig sets it and
	// errors quote it. Optional.
	Source string
}

// Transport kinds accepted in ServerConfig.Type and reported in ServerStatus.Transport. They
// are the transport package's kinds (one spelling everywhere); ServerConfig.Type stays a
// string so configs can be built from any source.
const (
	TypeStdio = string(transport.KindStdio)
	TypeHTTP  = string(transport.KindHTTP)
	TypeSSE   = string(transport.KindSSE)
	// TypeInProcess marks a server reached through ServerConfig.InProcess.
	TypeInProcess = string(transport.KindInProcess)
)

// String describes the server without secrets (see ServerConfig).
func (c ServerConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(", c.ID)
	switch {
	case c.Command != "":
		fmt.Fprintf(&b, "stdio %s", c.Command)
		if len(c.Args) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(redact.Args(c.Args), " "))
		}
		if len(c.Env) > 0 {
			fmt.Fprintf(&b, " env=%s", redact.Keys(c.Env))
		}
	case c.InProcess != nil:
		b.WriteString("inprocess")
	case c.URL != "":
		typ := c.Type
		if typ == "" {
			typ = "auto"
		}
		fmt.Fprintf(&b, "%s %s", typ, redact.URL(c.URL))
		if len(c.Headers) > 0 {
			fmt.Fprintf(&b, " headers=%s", redact.Keys(c.Headers))
		}
		if c.Auth != nil {
			fmt.Fprintf(&b, " auth=%s", c.Auth)
		}
	default:
		b.WriteString("unconfigured")
	}
	b.WriteString(")")
	return b.String()
}

// GoString is String, so %#v cannot print secrets either.
func (c ServerConfig) GoString() string {
	return "bridge.ServerConfig" + strings.TrimPrefix(c.String(), c.ID)
}

// LogValue implements slog.LogValuer with secrets masked (see ServerConfig).
func (c ServerConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("id", c.ID)}
	if c.Type != "" {
		attrs = append(attrs, slog.String("type", c.Type))
	}
	if c.Command != "" {
		attrs = append(attrs, slog.String("command", c.Command), slog.Any("args", redact.Args(c.Args)))
	}
	if len(c.Env) > 0 {
		attrs = append(attrs, slog.String("env", redact.Keys(c.Env)))
	}
	if c.URL != "" {
		attrs = append(attrs, slog.String("url", redact.URL(c.URL)))
	}
	if len(c.Headers) > 0 {
		attrs = append(attrs, slog.String("headers", redact.Keys(c.Headers)))
	}
	if c.Auth != nil {
		attrs = append(attrs, slog.String("auth", c.Auth.String()))
	}
	return slog.GroupValue(attrs...)
}
