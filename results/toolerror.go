package results

// ToolError is a tool's own failure (a tools/call result with isError: true). Error returns
// Text, the flattened result, which is meant for the model to read. Distinguish it from
// transport failures with errors.As.
type ToolError struct{ Text string }

// Error returns Text unchanged, so the model reads exactly what the tool reported.
func (e *ToolError) Error() string { return e.Text }
