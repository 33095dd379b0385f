package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"github.com/ttalk/mcpbridge/bridge"
)

const mainUsage = `mcpbridge turns MCP servers into inline agent tools; this command checks them.

Usage:
  mcpbridge probe FILE [--json] [-v] [--timeout D]      dial every server and report what works
  mcpbridge tools FILE [--json] [-v] [--timeout D]      list the tools exactly as a model sees them
  mcpbridge call FILE TOOL ['JSON'] [-v] [--timeout D]  call one tool, print what the model reads
  mcpbridge version                                     print the version
  mcpbridge help [COMMAND]                              show help

FILE is a servers file: servers.yaml, or the JSON config of Claude Desktop, Cursor, VS Code,
Windsurf, Gemini CLI, mcphost, ...

Exit status: 0 ok, 1 usage or servers-file error, 2 a server or the tool call failed.
`

// command is one subcommand: its flags and what it does with them.
type command struct {
	name    string
	usage   string // first lines of -h, before the flag defaults
	minArgs int    // positional arguments
	maxArgs int
	run     func(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error
}

// cliFlags are the flags shared by the subcommands; each FlagSet defines the ones it takes.
type cliFlags struct {
	json    bool
	verbose bool
	timeout time.Duration
}

// cliEnv is what a command writes to.
type cliEnv struct {
	stdout io.Writer
	stderr *console
}

func commands() []command {
	return []command{
		{name: "probe", minArgs: 1, maxArgs: 1, run: runProbe, usage: `Usage: mcpbridge probe FILE [--json] [-v] [--timeout D]

Dials every server in FILE in parallel and reports, per server: status, transport, phase
timings, server name/version, protocol version, tool counts (model-visible / app-only / MCP App
tools), renamed tools and why, schema problems, an estimate of the tokens the tool definitions
cost, and for failures the phase, cause and stderr tail. Progress goes to stderr, the report
to stdout. Exit 0 when every server works, 2 when any failed, 1 for usage or config errors.
`},
		{name: "tools", minArgs: 1, maxArgs: 1, run: runTools, usage: `Usage: mcpbridge tools FILE [--json] [-v] [--timeout D]

Lists the tools of every server in FILE exactly as a model will see them: name, description
and parameters (--json: the JSON array a host sends to a model API). Servers that fail are
logged on stderr and skipped; the exit status is then 2.
`},
		{name: "call", minArgs: 2, maxArgs: 3, run: runCall, usage: `Usage: mcpbridge call FILE TOOL ['JSON'] [-v] [--timeout D]

Connects to the servers in FILE, calls TOOL (its model-visible name, as "mcpbridge tools"
shows it) with the JSON object given (default {}) through the bridge, and prints what the model
would read. A tool's own error prints its text and exits 2.
`},
		{name: "version", run: runVersion, usage: `Usage: mcpbridge version

Prints the mcpbridge version and the Go version it was built with.
`},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run is the whole program: args without the program name; it never exits the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	con := newConsole(stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return &exitError{code: exitUsage, err: errors.New("no command given"), quiet: true}
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			c, ok := findCommand(args[1])
			if !ok {
				return usageErr("help: unknown command %q", args[1])
			}
			fs := newFlagSet(c, &cliFlags{}, stderr)
			fs.Usage()
			return nil
		}
		fmt.Fprint(stderr, mainUsage)
		return nil
	}
	c, ok := findCommand(name)
	if !ok {
		fmt.Fprint(stderr, mainUsage)
		return usageErr("unknown command %q", name)
	}
	fl := &cliFlags{}
	fs := newFlagSet(c, fl, stderr)
	pos, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err, quiet: true} // the flag package printed it
	}
	if len(pos) < c.minArgs || len(pos) > c.maxArgs {
		fs.Usage()
		return usageErr("%s: want %s, got %d argument(s)", c.name, argCount(c), len(pos))
	}
	return c.run(ctx, &cliEnv{stdout: stdout, stderr: con}, fl, pos)
}

func argCount(c command) string {
	switch {
	case c.maxArgs == 0:
		return "no arguments"
	case c.minArgs == c.maxArgs:
		return fmt.Sprintf("%d argument(s)", c.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", c.minArgs, c.maxArgs)
}

func newFlagSet(c command, fl *cliFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mcpbridge "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch c.name {
	case "probe", "tools":
		fs.BoolVar(&fl.json, "json", false, "print one JSON document on stdout")
		fallthrough
	case "call":
		fs.BoolVar(&fl.verbose, "v", false, "log at debug level (including each stdio server's stderr)")
		fs.DurationVar(&fl.timeout, "timeout", 0, "start-up timeout per server (spawn/dial, initialize, tools/list); 0: the file's or 60s")
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, c.usage)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(stderr, "\nFlags (before or after the arguments):")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseInterspersed parses flags that may come before, between or after the positional
// arguments; everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for range len(args) + 1 { // each round consumes at least one argument
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// newLogger builds the CLI's tint handler on the console at the given level.
func newLogger(con *console, level slog.Level) *slog.Logger {
	return slog.New(tint.NewTextHandler(con, &tint.Options{
		Level:      level,
		TimeFormat: "15:04:05.000",
		NoColor:    !con.color,
	}))
}

// readConfig loads FILE and logs its warnings; errors are usage errors (exit 1).
func readConfig(path string, log *slog.Logger) (*bridge.ConfigFile, error) {
	cf, err := bridge.ReadConfig(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	for _, w := range cf.Warnings {
		log.Warn(w)
	}
	if len(cf.Servers) == 0 {
		return nil, usageErr("%s: no enabled servers", path)
	}
	return cf, nil
}

func runVersion(_ context.Context, env *cliEnv, _ *cliFlags, _ []string) error {
	_, err := fmt.Fprintf(env.stdout, "mcpbridge %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

// version is the module version the binary was built from: a tag for `go install ...@vX`,
// else the VCS revision, else "devel".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		return "devel-" + rev + dirty
	}
	return "devel"
}

// fmtDur prints a duration for people: 412ms, 3.2s.
func fmtDur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// lastLines returns the last n non-empty lines of s, each cut to a readable length.
func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > 300 {
			l = strings.ToValidUTF8(l[:300], "") + "…"
		}
		out = append(out, l)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// isTerminal reports whether w is a character device (a terminal), without extra deps.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
