package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/config"
)

// secrets appear in the test configs and must never be printed.
var secrets = []string{testToken, "env-secret-do-not-print", "query-secret-do-not-print"}

// fixture is a config from testdata with its placeholders filled in, written to a temp dir.
type fixture struct {
	path string
	bin  string
	url  string
	dir  string
}

func writeFixture(t *testing.T, name string, withHTTP bool) fixture {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{bin: bin, dir: t.TempDir()}
	if withHTTP {
		f.url = startHTTPServer(t)
	}
	s := strings.NewReplacer("{{BIN}}", bin, "{{URL}}", f.url, "{{TOKEN}}", testToken).Replace(string(tmpl))
	f.path = filepath.Join(f.dir, name)
	if err := os.WriteFile(f.path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// runCLI runs the program in-process and returns its output and exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

var (
	durRE   = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`)
	jsonMs  = regexp.MustCompile(`"(ms|elapsedMs)": \d+`)
	localRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
)

// normalise removes what changes from run to run: paths, ports, timings.
func (f fixture) normalise(s string) string {
	s = strings.ReplaceAll(s, f.bin, "<bin>")
	s = strings.ReplaceAll(s, f.dir, "<tmp>")
	s = localRE.ReplaceAllString(s, "http://<addr>")
	s = jsonMs.ReplaceAllString(s, `"$1": 0`)
	return durRE.ReplaceAllString(s, "<dur>")
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func checkNoSecrets(t *testing.T, outputs ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output contains the secret %q:\n%s", s, out)
			}
		}
	}
}

func TestProbeGolden(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		http     bool
		args     []string // after "probe FILE"
		code     int
		golden   string
		progress []string // lines expected on stderr
	}{
		{name: "claude desktop text", config: "claude_desktop.json", code: 2, golden: "probe_claude_desktop",
			progress: []string{"✓ basic  6 tools  ", "✓ second  1 tools  ", "✗ broken  ", "✗ missing  start: "}},
		{name: "claude desktop json", config: "claude_desktop.json", args: []string{"--json"}, code: 2, golden: "probe_claude_desktop_json"},
		{name: "vscode servers", config: "vscode.json", code: 0, golden: "probe_vscode", progress: []string{"✓ basic  6 tools  "}},
		{name: "cursor url and headers", config: "cursor.json", http: true, code: 0, golden: "probe_cursor", progress: []string{"✓ remote  1 tools  "}},
		{name: "mcphost headers list json", config: "mcphost.yaml", http: true, args: []string{"--json", "--timeout", "20s"}, code: 0, golden: "probe_mcphost_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := writeFixture(t, tt.config, tt.http)
			stdout, stderr, code := runCLI(t, append([]string{"probe", f.path}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, tt.code, stderr)
			}
			checkNoSecrets(t, stdout, stderr)
			for _, p := range tt.progress {
				if !strings.Contains(stderr, p) {
					t.Errorf("stderr lacks progress %q:\n%s", p, stderr)
				}
			}
			if strings.Contains(stderr, "\r") || strings.Contains(stderr, "\x1b[") {
				t.Errorf("stderr is not a terminal but got \\r or ANSI escapes:\n%q", stderr)
			}
			if len(tt.args) > 0 && tt.args[0] == "--json" {
				var doc map[string]any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
				}
			}
			checkGolden(t, tt.golden, f.normalise(stdout))
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string // in stderr
	}{
		{name: "bad yaml", config: "bad.yaml", want: []string{"bad.yaml:3"}},
		{name: "unset variable", config: "unset.yaml", want: []string{"needs-var", "command", "MCPBRIDGE_CLI_TEST_UNSET_VARIABLE"}},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"probe", "tools", "call"} {
			t.Run(tt.name+" "+cmd, func(t *testing.T) {
				f := writeFixture(t, tt.config, false)
				args := []string{cmd, f.path}
				if cmd == "call" {
					args = append(args, "echo", "{}")
				}
				stdout, stderr, code := runCLI(t, args...)
				if code != 1 {
					t.Errorf("exit code = %d, want 1\nstderr:\n%s", code, stderr)
				}
				if stdout != "" {
					t.Errorf("stdout = %q, want nothing", stdout)
				}
				for _, w := range tt.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, stderr)
					}
				}
			})
		}
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr (or stdout for version)
	}{
		{name: "no args", args: nil, code: 1, want: "Usage:"},
		{name: "help", args: []string{"help"}, code: 0, want: "mcpbridge probe [FILE]"},
		{name: "-h", args: []string{"-h"}, code: 0, want: "mcpbridge probe [FILE]"},
		{name: "--help", args: []string{"--help"}, code: 0, want: "mcpbridge call [FILE] TOOL"},
		{name: "help probe", args: []string{"help", "probe"}, code: 0, want: "-timeout"},
		{name: "help unknown", args: []string{"help", "nope"}, code: 1, want: `unknown command "nope"`},
		{name: "-h probe", args: []string{"-h", "probe"}, code: 0, want: "Usage: mcpbridge probe [FILE]"},
		{name: "help call", args: []string{"help", "call"}, code: 0, want: "Usage: mcpbridge call [FILE] TOOL ['JSON'] [--cache C] [-v] [--timeout D]"},
		{name: "help too many", args: []string{"help", "a", "b"}, code: 1, want: "want 0 to 1 arguments, got 2"},
		{name: "probe -h", args: []string{"probe", "-h"}, code: 0, want: "Usage: mcpbridge probe [FILE]"},
		{name: "probe file -h", args: []string{"probe", "servers.yaml", "-h"}, code: 0, want: "Usage: mcpbridge probe [FILE]"},
		{name: "tools --help", args: []string{"tools", "--help"}, code: 0, want: "-json"},
		{name: "call -h", args: []string{"call", "-h"}, code: 0, want: "Usage: mcpbridge call"},
		{name: "version -h", args: []string{"version", "-h"}, code: 0, want: "Usage: mcpbridge version"},
		{name: "unknown command", args: []string{"frob"}, code: 1, want: `unknown command "frob"`},
		{name: "probe without file", args: []string{"probe"}, code: 1, want: "want 1 argument(s) (FILE, or one server after --), got 0"},
		{name: "probe two files", args: []string{"probe", "a", "b"}, code: 1, want: "got 2"},
		{name: "bad flag", args: []string{"probe", "x.yaml", "--frob"}, code: 1, want: "flag provided but not defined: -frob"},
		{name: "bad timeout", args: []string{"probe", "--timeout", "soon", "x.yaml"}, code: 1, want: "invalid value"},
		{name: "call flag not json", args: []string{"call", "x.yaml", "--json", "t"}, code: 1, want: "not defined: -json"},
		{name: "call bad args", args: []string{"call", "x.yaml", "t", "[1]"}, code: 1, want: "must be a JSON object"},
		{name: "missing file", args: []string{"probe", "/nonexistent/servers.yaml"}, code: 1, want: "read servers file"},
		{name: "version extra arg", args: []string{"version", "x"}, code: 1, want: "want no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	stdout, stderr, code := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "mcpbridge ") || stderr != "" {
		t.Errorf("version: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args []string
		pos  []string
		json bool
	}{
		{args: []string{"f"}, pos: []string{"f"}},
		{args: []string{"--json", "f"}, pos: []string{"f"}, json: true},
		{args: []string{"f", "--json"}, pos: []string{"f"}, json: true},
		{args: []string{"f", "t", "-json", "{}"}, pos: []string{"f", "t", "{}"}, json: true},
		{args: []string{"f", "--", "--json"}, pos: []string{"f", "--json"}},
		{args: []string{"--", "-x", "y"}, pos: []string{"-x", "y"}},
		{args: nil, pos: nil},
	}
	for _, tt := range tests {
		c, _ := findCommand("probe")
		fl := &cliFlags{}
		fs := newFlagSet(c, fl, &bytes.Buffer{})
		pos, err := parseInterspersed(fs, tt.args)
		if err != nil || strings.Join(pos, "|") != strings.Join(tt.pos, "|") || fl.json != tt.json {
			t.Errorf("parseInterspersed(%q) = %q, json %v, %v; want %q, json %v", tt.args, pos, fl.json, err, tt.pos, tt.json)
		}
	}
}

func TestToolsJSON(t *testing.T) {
	f := writeFixture(t, "claude_desktop.json", false)
	stdout, stderr, code := runCLI(t, "tools", "--json", f.path)
	if code != 2 { // broken and missing fail
		t.Errorf("exit code = %d, want 2\nstderr:\n%s", code, stderr)
	}
	checkNoSecrets(t, stdout, stderr)
	if !json.Valid([]byte(stdout)) {
		t.Fatalf("stdout is not JSON:\n%s", stdout)
	}
	servers, _, err := config.Read(f.path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := bridge.Connect(t.Context(), servers, &bridge.Options{Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	// Each tool is json.Marshal of the Tool, byte for byte, with the server's ID after it.
	var want []string
	for _, tool := range set.Tools() {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		server, _ := json.Marshal(tool.Server.ID())
		want = append(want, strings.TrimSuffix(string(b), "}")+`,"server":`+string(server)+"}")
	}
	if got := strings.TrimSuffix(stdout, "\n"); got != "["+strings.Join(want, ",")+"]" {
		t.Errorf("tools --json =\n%s\nwant json.Marshal of each tool with its server =\n[%s]", got, strings.Join(want, ","))
	}
	// The list is plain data: decoded with each tool's server as Tool.ServerID, it is
	// indexed by server as the connected tools are.
	var listed []struct {
		bridge.Tool
		Server string `json:"server"`
	}
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil {
		t.Fatal(err)
	}
	stored := make(bridge.Tools, len(listed))
	for i, l := range listed {
		stored[i] = l.Tool
		stored[i].ServerID = l.Server
	}
	for _, q := range []string{"basic", "second"} {
		live, plain := set.Tools().Index().Search(q, 0), stored.Index().Search(q, 0)
		if len(live) == 0 || len(live) != len(plain) {
			t.Fatalf("Search(%q): %d connected hits, %d from tools --json", q, len(live), len(plain))
		}
		for i := range live {
			if live[i].Tool.Name != plain[i].Tool.Name || plain[i].Tool.ServerID != live[i].Tool.ServerID {
				t.Errorf("Search(%q)[%d] = %s of %s from tools --json, want %s of %s", q, i, plain[i].Tool.Name, plain[i].Tool.ServerID, live[i].Tool.Name, live[i].Tool.ServerID)
			}
		}
	}
}

func TestToolsText(t *testing.T) {
	f := writeFixture(t, "claude_desktop.json", false)
	stdout, stderr, code := runCLI(t, "tools", f.path)
	if code != 2 {
		t.Errorf("exit code = %d, want 2\nstderr:\n%s", code, stderr)
	}
	checkNoSecrets(t, stdout, stderr)
	checkGolden(t, "tools_claude_desktop", f.normalise(stdout))
}

func TestCall(t *testing.T) {
	tests := []struct {
		name    string
		args    []string // after "call FILE"
		code    int
		stdout  string
		inError string
	}{
		{name: "text result", args: []string{"echo", `{"text":"hi"}`}, code: 0, stdout: "basic says: hi\n"},
		{name: "flags after args", args: []string{"echo", `{"text":"hi"}`, "-v"}, code: 0, stdout: "basic says: hi\n"},
		{name: "renamed tool", args: []string{"second__echo", `{"text":"yo"}`}, code: 0, stdout: "mini says: yo\n"},
		{name: "no arguments", args: []string{"do_thing"}, code: 0, stdout: "done\n"},
		{name: "tool error", args: []string{"fail", "{}"}, code: 2, stdout: "boom: the widget is broken\n", inError: "reported an error"},
		{name: "invalid arguments", args: []string{"echo", `{"text":5}`}, code: 2, inError: "/text"},
		{name: "remote name", args: []string{"do.thing"}, code: 1, inError: `the model sees it as "do_thing"`},
		{name: "unknown tool", args: []string{"nope"}, code: 1, inError: `no model-visible tool "nope"`},
		{name: "app-only tool", args: []string{"chart_data"}, code: 1, inError: `no model-visible tool "chart_data"`},
	}
	f := writeFixture(t, "vscode_and_mini.json", false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"call", f.path}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, tt.code, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout = %q, want %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.inError) {
				t.Errorf("stderr lacks %q:\n%s", tt.inError, stderr)
			}
		})
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestVersionOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"nil", nil, "devel"},
		{"nothing known", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"empty version", &debug.BuildInfo{}, "devel"},
		{"go install tag", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"tag wins over revision", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, "v0.4.0"},
		{"checkout pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261202070000-0123456789ab+dirty"}},
			"v0.0.0-20261202070000-0123456789ab+dirty"},
		{"revision only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			"devel-0123456789ab"},
		{"revision modified", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}},
			"devel-0123456789ab-dirty"},
		{"short revision", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "devel-abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.bi); got != tt.want {
				t.Errorf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionBinary builds the command from this checkout and runs "mcpbridge version": it
// prints what the binary's build info says (`go version -m` reads the same record), and a
// build from a git clone names its revision. (Go does not stamp VCS data in a git worktree,
// whose .git is a file: there the module is "(devel)" and the answer is a true "devel".)
func TestVersionBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "mcpbridge")
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	bi := &debug.BuildInfo{}
	for l := range strings.SplitSeq(string(info), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			bi.Main = debug.Module{Path: f[1], Version: f[2]}
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok && strings.HasPrefix(k, "vcs") {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: k, Value: v})
			}
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("mcpbridge version: %v", err)
	}
	got := strings.Fields(string(out))
	if len(got) < 2 || got[0] != "mcpbridge" {
		t.Fatalf("mcpbridge version printed %q", out)
	}
	if want := versionOf(bi); got[1] != want {
		t.Errorf("version %q, want %q from the build info:\n%s", got[1], want, info)
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && !strings.Contains(got[1], s.Value[:min(12, len(s.Value))]) {
			t.Errorf("version %q does not name the revision %s", got[1], s.Value)
		}
	}
}
