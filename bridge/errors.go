package bridge

import "fmt"

// ServerError says which server failed, in which phase, and why. Connect joins one per
// skipped server; Handlers return one for transport and protocol failures (a tool's own
// failure is a *results.ToolError instead). Stderr holds the tail of a stdio server's
// stderr when there is one.
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
