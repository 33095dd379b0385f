package tasks

// Mode says when a server's tools run as MCP tasks. It is the type of bridge/config's
// TaskMode (ServerConfig.Tasks, Options.Tasks, servers.yaml's tasks key), which aliases it:
// the mode is the tasks client's policy, so its home is here and the configuration refers to it.
type Mode string

// The task modes.
const (
	// Auto (the default) runs as a task every tool that must run as one
	// (execution.taskSupport "required", protocol 2025-11-25) and no other; under
	// 2026-07-28 the bridge declares the tasks extension and follows whatever task the
	// server starts.
	Auto Mode = "auto"
	// Always also runs tools whose execution.taskSupport is "optional" as tasks.
	Always Mode = "always"
	// Never never runs a tool as a task: tools that require one are skipped (with a
	// ToolProblem) and the tasks extension is not declared.
	Never Mode = "never"
)

// Valid reports whether m is a mode ("" counts: the default).
func (m Mode) Valid() bool {
	switch m {
	case "", Auto, Always, Never:
		return true
	}
	return false
}
