package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// The command table. Everything the CLI says about its own usage comes from commands():
// "mcpbridge help", each command's -h, argument-count errors, and the synopsis blocks in
// doc.go and README.md (TestUsageDocs fails when those drift; go test -update rewrites them).
// Adding a command is one entry in commands(); adding a flag is one cliFlag in the command's
// flags (a field in cliFlags holds its value).

// command is one subcommand: its synopsis, documentation, flags and what it does.
type command struct {
	name    string
	args    string // positional arguments for the synopsis: "FILE TOOL ['JSON']"
	summary string // one line for "mcpbridge help", doc.go and the README
	doc     string // paragraph(s) for "mcpbridge help NAME" and NAME -h, after the synopsis
	flags   []cliFlag
	minArgs int // positional arguments accepted
	maxArgs int
	// inline: FILE (the first argument) may be left out for one server after "--" (inline.go).
	inline bool
	run    func(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error
}

// cliFlag is one flag of a command.
type cliFlag struct {
	name  string // without dashes; the synopsis shows -x for one letter, --name otherwise
	arg   string // the value's placeholder in the synopsis ("D"); "" for a boolean flag
	usage string
	// field returns the cliFlags field the flag sets: *bool, *string, *int or *time.Duration.
	// Its value when the FlagSet is built is the default.
	field func(*cliFlags) any
}

// cliFlags holds the values of every command's flags; each command's FlagSet defines the
// ones the command takes.
type cliFlags struct {
	json      bool
	verbose   bool
	timeout   time.Duration
	addr      string
	wait      time.Duration
	noBrowser bool

	format           string // tools: a model API's shape
	strict           bool   // tools --format openai*: OpenAI strict mode
	adapt            bool   // tools --format: adapt schemas to what the API accepts
	geminiParameters bool   // tools --format gemini: the OpenAPI-subset "parameters" field
	deferMode        string // tools --format: deferred loading with this search ("" off)

	cache string // call: the listing cache (toolcache.go)

	skills bool // set by the skills command: connect with bridge.Options.Skills
}

// Flags more than one command takes.

func jsonFlag() cliFlag {
	return cliFlag{name: "json", usage: "print one JSON document on stdout",
		field: func(f *cliFlags) any { return &f.json }}
}

func verboseFlag() cliFlag {
	return cliFlag{name: "v", usage: "log at debug level (including each stdio server's stderr)",
		field: func(f *cliFlags) any { return &f.verbose }}
}

func timeoutFlag() cliFlag {
	return cliFlag{name: "timeout", arg: "D",
		usage: "start-up timeout per server (spawn/dial, initialize, tools/list); 0: the file's or 60s",
		field: func(f *cliFlags) any { return &f.timeout }}
}

// Flags of tools --format.

func formatFlag() cliFlag {
	return cliFlag{name: "format", arg: "F",
		usage: "print the JSON tools array of one model API: openai, openai-responses, anthropic or gemini",
		field: func(f *cliFlags) any { return &f.format }}
}

func strictFlag() cliFlag {
	return cliFlag{name: "strict", usage: `with --format openai*: adapt schemas to OpenAI strict mode and send "strict": true (tools that cannot be made strict are sent non-strict, said on stderr)`,
		field: func(f *cliFlags) any { return &f.strict }}
}

func adaptFlag() cliFlag {
	return cliFlag{name: "adapt", usage: "with --format: rewrite schemas around what the API rejects (mcpbridge probe lists it)",
		field: func(f *cliFlags) any { return &f.adapt }}
}

func geminiParametersFlag() cliFlag {
	return cliFlag{name: "gemini-parameters", usage: `with --format gemini: send Gemini's OpenAPI-subset "parameters" (adapted) instead of "parametersJsonSchema"`,
		field: func(f *cliFlags) any { return &f.geminiParameters }}
}

func deferFlag() cliFlag {
	return cliFlag{name: "defer", arg: "S",
		usage: "with --format: defer every tool the servers file does not keep (defer: false), found by search S: client (the bridge's index), hosted or regex (the API's own); stderr says what the model reads upfront",
		field: func(f *cliFlags) any { return &f.deferMode }}
}

// commands is the command table, in the order help lists it.
func commands() []command {
	return []command{
		{
			name: "probe", inline: true, args: "FILE", minArgs: 1, maxArgs: 1, run: runProbe,
			flags:   []cliFlag{jsonFlag(), verboseFlag(), timeoutFlag()},
			summary: "dial every server and report what works",
			doc: `Dials every server in FILE in parallel and reports, per server: status, transport, phase
timings, server name/version, protocol version, tool counts (model-visible / app-only / MCP App
tools), MCP task support and the tools that run as tasks, renamed tools and why, schema
problems, what each model API (OpenAI, OpenAI strict,
Anthropic, Gemini parametersJsonSchema and parameters) would reject and what is left after
adapting, an estimate of the tokens the tool definitions cost, and for failures the phase, cause and stderr tail. Progress goes to stderr, the report
to stdout. Exit 0 when every server works, 2 when any failed, 1 for usage or config errors.
A stdio server that has not answered by --timeout is reported as still starting, or (on
Linux) as npx still installing the package: a cold npx start may need a longer --timeout.
`,
		},
		{
			name: "tools", inline: true, args: "FILE", minArgs: 1, maxArgs: 1, run: runTools,
			flags:   []cliFlag{jsonFlag(), formatFlag(), strictFlag(), adaptFlag(), geminiParametersFlag(), deferFlag(), verboseFlag(), timeoutFlag()},
			summary: "list the tools exactly as a model sees them",
			doc: `Lists the tools of every server in FILE exactly as a model will see them: name, description
and parameters (--json: the JSON array a host sends to a model API). With --format, the
tools array exactly as that model API's request carries it (OpenAI Chat Completions or
Responses, Anthropic Messages, Gemini), schemas as the servers sent them unless --strict,
--adapt or --gemini-parameters asks for adaptation; what was changed and what the API may
still reject goes to stderr. Servers that fail are logged on stderr and skipped; the exit
status is then 2.
`,
		},
		{
			name: "call", inline: true, args: "FILE TOOL ['JSON']", minArgs: 2, maxArgs: 3, run: runCall,
			flags: []cliFlag{{name: "cache", arg: "C",
				usage: "a listing cache (JSON; written by call when it dials every server): the server of each tool, so that later calls dial only that one",
				field: func(f *cliFlags) any { return &f.cache }}, verboseFlag(), timeoutFlag()},
			summary: "call one tool, print what the model reads",
			doc: `Connects to the servers in FILE, calls TOOL (its model-visible name, as "mcpbridge tools"
shows it) with the JSON object given (default {}) through the bridge, and prints what the model
would read. Only the server that owns TOOL is started when the name says which: a
SERVER__TOOL name whose SERVER is a server ID of FILE, or a name the --cache file lists (call
writes it, 0600, whenever it dials every server; a file over 1 MiB or not of that shape is
ignored; a tool no longer on its server falls back to dialling all). Otherwise every server
is dialled. A tool's own error prints its text and exits 2. While the call runs, progress the
server reports and the status of an MCP task (a tool that runs as one, see the tasks key of
the servers file) are shown on stderr; Ctrl-C cancels the call, and the task on the server.
`,
		},
		{
			name: "skills", inline: true, args: "FILE [SKILL]", minArgs: 1, maxArgs: 2, run: runSkills,
			flags:   []cliFlag{jsonFlag(), verboseFlag(), timeoutFlag()},
			summary: "list the servers' skills, or print one",
			doc: `Connects to the servers in FILE with the MCP Skills extension and lists each server's
skills (io.modelcontextprotocol/skills: skills/list, or skill:// resources): name,
description, files, size and what they cost a model in tokens; no skill file is read to list
them. With SKILL (a name, or SERVER/NAME), loads that skill's SKILL.md, verified against the
server's manifest (digest, size, frontmatter), and prints it as a model reads it; a
verification failure names server, skill and file and exits 2.
`,
		},
		{
			name: "serve", inline: true, args: "FILE", minArgs: 1, maxArgs: 1, run: runServe,
			flags: []cliFlag{{name: "addr", arg: "ADDR",
				usage: "listen address of the page, a loopback IP and port (default 127.0.0.1:7391, or a free port when that one is taken)",
				field: func(f *cliFlags) any { return &f.addr }}, verboseFlag(), timeoutFlag()},
			summary: "see and try every server, tool and MCP App in a browser",
			doc: `Connects to the servers in FILE and serves a local page (printed with its one-run token)
that lists every server (status, transport, protocol, timings, problems) and its tools as the
model sees them, calls any tool from a form built from its schema or from JSON, shows what the
model reads next to the raw result, and renders MCP App tools' ui:// resources in a sandbox as
an MCP Apps host. The page listens on 127.0.0.1 only and needs the token (first in the URL, then
a cookie); Views run on a second loopback port. Runs until Ctrl-C (exit 0).
`,
		},
		{
			name: "login", args: "FILE [ID...]", minArgs: 1, maxArgs: manyArgs, run: runLogin,
			flags: []cliFlag{
				{name: "no-browser", usage: "only print the URL to open, never start a browser",
					field: func(f *cliFlags) any { return &f.noBrowser }},
				{name: "wait", arg: "D", usage: "how long to wait for the browser to come back (default 5m)",
					field: func(f *cliFlags) any { return &f.wait }},
				verboseFlag(), timeoutFlag()},
			summary: "log in to OAuth servers once, in a browser",
			doc: `Logs in to the servers ID (default: every server of FILE with auth: {type: oauth}), one
after the other, with the OAuth authorization code flow and PKCE: a redirect listener on
127.0.0.1 (a random port, one use, state checked), the authorization URL printed on stderr and
opened in the system browser where there is one. The tokens are kept in the per-user token file
(0600) and refreshed silently from then on; probe, tools, call, serve and the library use them
without asking again. Logging in again replaces the stored tokens once it succeeds.
Exit 0 when every login worked, 2 when any failed.
`,
		},
		{
			name: "logout", args: "FILE ID...", minArgs: 2, maxArgs: manyArgs, run: runLogout,
			flags:   []cliFlag{verboseFlag()},
			summary: "forget the stored OAuth tokens of servers",
			doc: `Deletes the stored OAuth tokens of the servers ID of FILE from the per-user token file.
The next connection to them needs a new login.
`,
		},
		{
			name: "version", run: runVersion,
			summary: "print the version",
			doc: `Prints the mcpbridge version and the Go version it was built with.
`,
		},
		{
			name: "help", args: "[COMMAND]", maxArgs: 1, run: runHelp,
			summary: "show help for mcpbridge or one command",
			doc: `Shows the list of commands, or the usage and flags of one command.
`,
		},
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

// synopsis is the command's usage line: "mcpbridge probe FILE [--json] [-v] [--timeout D]".
func (c command) synopsis() string {
	parts := []string{"mcpbridge", c.name}
	if args := c.args; args != "" {
		if c.inline {
			args = "[" + strings.Replace(args, "FILE", "FILE]", 1)
		}
		parts = append(parts, args)
	}
	for _, f := range c.flags {
		s := "--" + f.name
		if len(f.name) == 1 {
			s = "-" + f.name
		}
		if f.arg != "" {
			s += " " + f.arg
		}
		parts = append(parts, "["+s+"]")
	}
	if c.inline {
		parts = append(parts, "[-- CMD [ARG...] | -- URL]")
	}
	return strings.Join(parts, " ")
}

// helpWidth bounds every line of the CLI's help, its doc.go and README blocks included (a
// doc.go line carries a tab before it): well under 100 columns.
const helpWidth = 90

// synopses is the command list "mcpbridge help" prints and doc.go and README.md carry: each
// command's synopsis (wrapped, continuation lines indented) and its summary on the line below.
func synopses() []string {
	var lines []string
	for _, c := range commands() {
		lines = append(lines, wrapWords(c.synopsis(), helpWidth, "      ")...)
		for _, l := range wrapWords(c.summary, helpWidth-4, "") {
			lines = append(lines, "    "+l)
		}
	}
	return lines
}

// wrapWords breaks s at spaces into lines of at most width columns (a longer word stays
// whole); lines after the first begin with indent. A bracketed group ("[--timeout D]",
// "[-- CMD [ARG...] | -- URL]") is never split.
func wrapWords(s string, width int, indent string) []string {
	var words []string
	for w := range strings.FieldsSeq(s) {
		if n := len(words); n > 0 && strings.Count(words[n-1], "[") > strings.Count(words[n-1], "]") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w
			if len(lines) > 0 {
				line = indent + w
			}
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// reflow rewraps each paragraph of doc (paragraphs end at a blank line) to helpWidth columns.
func reflow(doc string) string {
	var b strings.Builder
	for i, para := range strings.Split(strings.TrimSpace(doc), "\n\n") {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range wrapWords(para, helpWidth, "") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// mainUsage is what "mcpbridge help" prints.
func mainUsage() string {
	var b strings.Builder
	b.WriteString("mcpbridge turns MCP servers into inline agent tools; this command checks them.\n\nUsage:\n")
	for _, l := range synopses() {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString(`
FILE is a servers file: servers.yaml, or the JSON config of Claude Desktop, Cursor, VS Code,
Windsurf, Gemini CLI, mcphost, ... Or leave FILE out and name one server after "--": its
command and arguments (a stdio server, no shell), or its http(s) URL alone; its ID comes from
the package or command (npx -y @scope/server-x@1.2 → server-x), from the URL's host otherwise.

Exit status: 0 ok, 1 usage or servers-file error, 2 a server or the tool call failed.
Run "mcpbridge help COMMAND" for a command's flags.
`)
	return b.String()
}

// newFlagSet builds c's FlagSet on fl; its Usage prints c's synopsis, doc and flags.
func newFlagSet(c command, fl *cliFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mcpbridge "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, f := range c.flags {
		switch p := f.field(fl).(type) {
		case *bool:
			fs.BoolVar(p, f.name, *p, f.usage)
		case *string:
			fs.StringVar(p, f.name, *p, f.usage)
		case *int:
			fs.IntVar(p, f.name, *p, f.usage)
		case *time.Duration:
			fs.DurationVar(p, f.name, *p, f.usage)
		} // any other type leaves the flag undefined, which TestCommandTable reports

	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\n%s", strings.Join(wrapWords(c.synopsis(), helpWidth, "         "), "\n"), reflow(c.doc))
		if len(c.flags) > 0 {
			fmt.Fprintln(stderr, "\nFlags (before or after the arguments):")
			printFlags(stderr, c, fs)
		}
	}
	return fs
}

// printFlags lists c's flags as flag.PrintDefaults does, the usage wrapped to helpWidth.
func printFlags(w io.Writer, c command, fs *flag.FlagSet) {
	for _, cf := range c.flags {
		f := fs.Lookup(cf.name)
		if f == nil {
			continue
		}
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if cf.arg != "" {
			name += " " + cf.arg
		}
		usage := f.Usage
		switch f.DefValue {
		case "", "false", "0", "0s":
		default:
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %s\n", name)
		for _, l := range wrapWords(usage, helpWidth-8, "") {
			fmt.Fprintf(w, "        %s\n", l)
		}
	}
}

// runHelp prints the list of commands, or one command's usage.
func runHelp(_ context.Context, env *cliEnv, _ *cliFlags, args []string) error {
	if len(args) == 0 {
		_, err := fmt.Fprint(env.stderr, mainUsage())
		return err
	}
	c, ok := findCommand(args[0])
	if !ok {
		return usageErr("help: unknown command %q", args[0])
	}
	newFlagSet(c, &cliFlags{}, env.stderr).Usage()
	return nil
}

// manyArgs is maxArgs of a command taking any number of arguments.
const manyArgs = 1 << 16

func argCount(c command) string {
	switch {
	case c.maxArgs == manyArgs:
		return fmt.Sprintf("at least %d argument(s)", c.minArgs)
	case c.maxArgs == 0:
		return "no arguments"
	case c.minArgs == c.maxArgs:
		return fmt.Sprintf("%d argument(s)", c.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", c.minArgs, c.maxArgs)
}
