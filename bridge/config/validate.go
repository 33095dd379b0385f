package config

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/tasks"
)

// Validation once: Validate holds every rule on a ServerConfig's values that does not need
// the network (tool filter globs, Expose, the task mode, the protocol version). The servers
// file's readers apply the same rules, through the same checks below, to each value as they
// read it (their errors name the file, line and key); Dial and Connect call Validate on
// configs built in Go. How a server is reached (command or URL, the type) is checked where
// it is used: the servers file's combination checks (config_server.go) and transport.

// TaskMode says when a server's tools run as MCP tasks (ServerConfig.Tasks, Options.Tasks,
// servers.yaml's tasks key). Its home is the tasks client (internal/tasks), whose policy it is.
type TaskMode = tasks.Mode

// The task modes (see internal/tasks).
const (
	// TasksAuto (the default) runs as a task every tool that must run as one
	// (execution.taskSupport "required", protocol 2025-11-25) and no other; under
	// 2026-07-28 the bridge declares the tasks extension and follows whatever task the
	// server starts.
	TasksAuto = tasks.Auto
	// TasksAlways also runs tools whose execution.taskSupport is "optional" as tasks.
	TasksAlways = tasks.Always
	// TasksNever never runs a tool as a task: tools that require one are skipped (with a
	// ToolProblem) and the tasks extension is not declared.
	TasksNever = tasks.Never
)

// What ServerConfig.Expose may hold.
const (
	// ExposeResources gives the model two tools for the server's resources:
	// <prefix>__list_resources ({"cursor"?}) and <prefix>__read_resource ({"uri"}).
	ExposeResources = "resources"
	// ExposePrompts gives the model two tools for the server's prompts:
	// <prefix>__list_prompts ({"cursor"?}) and <prefix>__get_prompt ({"name", "arguments"?}).
	ExposePrompts = "prompts"
)

// Validate checks c's values: the Include and Exclude globs, the Expose values, the task
// mode and the protocol version. The error names the first problem.
func Validate(c ServerConfig) error {
	for _, pats := range [][]string{c.Include, c.Exclude} {
		for _, p := range pats {
			if err := checkPattern(p); err != nil {
				return fmt.Errorf("bad tool filter pattern %q: %w", p, err)
			}
		}
	}
	for _, e := range c.Expose {
		if err := checkExpose(e); err != nil {
			return err
		}
	}
	if !c.Tasks.Valid() {
		return fmt.Errorf("unknown task mode %q (want auto, always or never)", c.Tasks)
	}
	if v := c.ProtocolVersion; v != "" && !supportedVersion(v) {
		return fmt.Errorf("unsupported protocolVersion %q (want one of %s)", v, strings.Join(mcp.SupportedProtocolVersions(), ", "))
	}
	return nil
}

// checkPattern rejects a malformed tool name glob (path.Match syntax).
func checkPattern(p string) error {
	_, err := path.Match(p, "")
	return err
}

// checkExpose rejects an unknown ServerConfig.Expose value.
func checkExpose(e string) error {
	if e != ExposeResources && e != ExposePrompts {
		return fmt.Errorf("expose: unknown value %q (want %q or %q)", e, ExposeResources, ExposePrompts)
	}
	return nil
}

// supportedVersion reports whether go-sdk speaks protocol version v.
func supportedVersion(v string) bool { return slices.Contains(mcp.SupportedProtocolVersions(), v) }
