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
	"slices"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/config"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// cliEnv is what a command writes to.
type cliEnv struct {
	stdout  io.Writer
	stderr  *console
	openURL func(string) error // opens the system browser (login)
	// secrets are masked in everything written to stdout and stderr and in the final
	// error; readConfig fills it.
	secrets *secretList
	// inline is the one server given after "--" in place of a servers file (see inline.go).
	inline []string
}

// run is the whole program: args without the program name; it never exits the process.
// Once the servers file is read, no output and no error shows a secret of it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	secrets := &secretList{}
	env := &cliEnv{stdout: &maskWriter{w: stdout, l: secrets}, stderr: newConsole(stderr), openURL: openBrowser, secrets: secrets}
	env.stderr.mask = secrets.mask
	return secrets.maskErr(runCommand(ctx, env, args, stderr))
}

// runCommand parses args and runs the command they name.
func runCommand(ctx context.Context, env *cliEnv, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage())
		return &exitError{code: exitUsage, err: errors.New("no command given"), quiet: true}
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	}
	c, ok := findCommand(name)
	if !ok {
		fmt.Fprint(stderr, mainUsage())
		return usageErr("unknown command %q", name)
	}
	fl := &cliFlags{}
	fs := newFlagSet(c, fl, stderr)
	args = args[1:]
	var inline []string // the one server after "--", in place of FILE
	if c.inline {
		if i := slices.Index(args, "--"); i >= 0 {
			args, inline = args[:i], args[i+1:]
			if len(inline) == 0 {
				fs.Usage()
				return usageErr("%s: nothing after --: give a server's command and arguments, or its http(s) URL, like: mcpbridge %s -- npx -y @modelcontextprotocol/server-everything", c.name, c.name)
			}
		}
	}
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err, quiet: true} // the flag package printed it
	}
	if inline != nil {
		// FILE is left out: args[0] becomes the server's description ("-- npx -y ..."),
		// which messages show where they would name the file.
		if len(pos) < c.minArgs-1 || len(pos) > c.maxArgs-1 {
			fs.Usage()
			return usageErr("%s: with a server after --, want %s before it (no FILE), got %d", c.name, argCount(command{minArgs: c.minArgs - 1, maxArgs: c.maxArgs - 1}), len(pos))
		}
		env.inline = inline
		pos = append([]string{"-- " + strings.Join(inline, " ")}, pos...)
	}
	if len(pos) < c.minArgs || len(pos) > c.maxArgs {
		fs.Usage()
		hint := ""
		if c.inline {
			hint = " (FILE, or one server after --)"
		}
		return usageErr("%s: want %s%s, got %d argument(s)", c.name, argCount(c), hint, len(pos))
	}
	return c.run(ctx, env, fl, pos)
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
		// Log lines carry server data (stderr lines, errors, tool names): escaped.
		ReplaceAttr: escapeLogAttr,
	}))
}

// readConfig loads FILE and logs its warnings; errors are usage errors (exit 1). From then
// on env's output masks the file's secrets.
// With a server given after "--" (env.inline), that server is the whole configuration.
func readConfig(env *cliEnv, path string, log *slog.Logger) (servers []bridge.ServerConfig, warnings []string, err error) {
	if env.inline != nil {
		servers = []bridge.ServerConfig{inlineServer(env.inline)}
	} else if servers, warnings, err = config.Read(path); err != nil {
		return nil, nil, &exitError{code: exitUsage, err: err}
	}
	env.secrets.addServers(servers)
	for _, w := range warnings {
		log.Warn(w)
	}
	if len(servers) == 0 {
		return nil, nil, usageErr("%s: no enabled servers", path)
	}
	return servers, warnings, nil
}

func runVersion(_ context.Context, env *cliEnv, _ *cliFlags, _ []string) error {
	_, err := fmt.Fprintf(env.stdout, "mcpbridge %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

// version is the module version the binary was built from (see versionOf).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

// versionOf reads a version out of build info: the module version (a tag for
// `go install ...@vX`, a pseudo-version for a checkout build since Go 1.24, with "+dirty"
// for uncommitted changes), else "devel-" and the VCS revision (with "-dirty" when
// vcs.modified), else "devel" when nothing is known.
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "devel"
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
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
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
		out = append(out, redact.Clip(l, 300))
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
