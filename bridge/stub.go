package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
)

// ServerError says why a server was skipped (or why a call failed): which server, in which
// phase, and the cause. Stderr holds the tail of a stdio server's stderr, when any.
type ServerError struct {
	Server string
	Phase  Phase
	Err    error
	Stderr string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("server %q: %s: %v", e.Server, e.Phase, e.Err)
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// Tools is a set of tools from one or more servers. It is assignable to []Tool.
type Tools []Tool

// Server is one live connection to an MCP server.
type Server struct{ id string }

var errTODO = errors.New("not implemented")

// ConnectServers is Connect with a background context and default options.
func ConnectServers(cfgs []ServerConfig) Tools {
	t, _ := Connect(context.Background(), cfgs, nil)
	return t
}

// Connect dials every server.
func Connect(ctx context.Context, cfgs []ServerConfig, opts *Options) (Tools, error) {
	return nil, errTODO
}

// Dial connects to one server.
func Dial(ctx context.Context, cfg ServerConfig, opts *Options) (*Server, error) { return nil, errTODO }

// Close closes every server behind the set.
func (t Tools) Close() error { return nil }

// Lookup finds a server by ID, then by hash.
func (t Tools) Lookup(idOrHash string) (*Server, bool) { return nil, false }

// Proxy serves a frontend's proxied request.
func (t Tools) Proxy(ctx context.Context, req apps.ProxyRequest) (json.RawMessage, error) {
	return nil, errTODO
}

// ID is the server's configured ID.
func (s *Server) ID() string { return s.id }

// Hash is the server hash.
func (s *Server) Hash() string { return "" }

// Tools are the model-visible tools.
func (s *Server) Tools() Tools { return nil }

// CallTool calls a tool by its remote name.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return nil, errTODO
}

// ReadResource reads a resource.
func (s *Server) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return nil, errTODO
}

// Close closes the server.
func (s *Server) Close() error { return nil }
