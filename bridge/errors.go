package bridge

import (
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/internal/session"

	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// ServerError says which server failed, in which phase, and why. It is the only error that
// names the server: causes it wraps never repeat it. Set.Failed holds one per skipped server;
// Handlers, Server.CallTool, ReadResource and Ping return one for everything but a tool's own
// failure (a *results.ToolError). Stderr holds the tail of a stdio server's stderr when there
// is one.
type ServerError struct {
	Server string
	Phase  Phase
	Err    error
	Stderr string
}

// Error names the server, the phase and the cause.
func (e *ServerError) Error() string {
	return fmt.Sprintf("mcp server %q: %s: %v", e.Server, e.Phase, e.Err)
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// Phase names the step of a server's life in which something failed.
type Phase string

// The phases of a server's start-up and use.
const (
	PhaseConfig     Phase = "config"         // the ServerConfig itself is invalid
	PhaseStart      Phase = "start"          // spawning the process or dialling the URL
	PhaseInitialize Phase = "initialize"     // the MCP handshake
	PhaseList       Phase = "tools/list"     // listing tools (every page)
	PhaseCall       Phase = "tools/call"     // calling a tool
	PhaseRead       Phase = "resources/read" // reading a resource (Server.ReadResource, the App proxy)
	PhasePing       Phase = "ping"           // Server.Ping and the App proxy's ping
	PhaseClose      Phase = "close"          // closing the session or stopping the process
	PhaseLogin      Phase = "login"          // a web host's login (StartLogin, CompleteLogin)

	// The requests of the tools that expose resources and prompts (ServerConfig.Expose).
	PhaseListResources Phase = "resources/list"
	PhaseListPrompts   Phase = "prompts/list"
	PhaseGetPrompt     Phase = "prompts/get"
)

// ErrInvalidArguments is wrapped by the error a Handler returns when the model's arguments
// are not a JSON object or do not match the tool's inputSchema. The server was not contacted.
var ErrInvalidArguments = schemaguard.ErrInvalidArguments

// ErrToolGone is wrapped by the error of a call to a tool the server no longer offers (it was
// missing from a re-listing after tools/list_changed or a reconnect). The server was not
// contacted.
var ErrToolGone = errors.New("the server no longer offers this tool")

// ErrUnknownTool is wrapped by the error of a call to a tool name nobody listed: a Tool's
// Handler or Invoke whose RemoteName is not in its Server's listing (a Tool value the host
// built or changed), and package provider's Toolset.Run for a name the model made up. The
// server is not contacted. (Set.Proxy answers an App's unknown tool with
// apps.ErrToolNotAllowed; Server.CallTool passes any name to the server.)
var ErrUnknownTool = errors.New("unknown tool")

// ErrServerClosed is wrapped by the error of every request made on a Server after its Close
// (or its Set's): a call, a listing, a login, a task operation. The server is not contacted.
var ErrServerClosed = session.ErrClosed
