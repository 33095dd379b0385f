package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestInlineServer(t *testing.T) {
	tests := []struct {
		cmdline []string
		id      string
		url     bool
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything"}, "server-everything", false},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"}, "server-everything", false},
		{[]string{"npx", "--yes", "--package", "x", "mcp-server-kubernetes"}, "mcp-server-kubernetes", false},
		{[]string{"/usr/local/bin/npx", "-y", "server-memory@latest", "--flag"}, "server-memory", false},
		{[]string{"npm", "exec", "--", "@scope/Some.Server"}, "some-server", false},
		{[]string{"pnpm", "dlx", "@playwright/mcp@0.0.40"}, "mcp", false},
		{[]string{"uvx", "mcp-server-fetch==2025.4.7"}, "mcp-server-fetch", false},
		{[]string{"uvx", "--from", "git+https://x/y", "mcp-server-git"}, "mcp-server-git", false},
		{[]string{"node", "/srv/weather/dist/index.js"}, "weather", false},
		{[]string{"python3", "my_server.py", "--port", "1"}, "my_server", false},
		{[]string{"python3", "-m", "mcp_server_time"}, "mcp_server_time", false},
		{[]string{`C:\tools\My Server.exe`}, "my-server", false},
		{[]string{"./bin/server__evil__name"}, "server_evil_name", false},
		{[]string{"npx"}, "npx", false},
		{[]string{"ÄÖÜ"}, "server", false},
		{[]string{"npx", "-y", strings.Repeat("a", 100)}, strings.Repeat("a", 32), false},
		{[]string{"https://mcp.deepwiki.com/mcp"}, "deepwiki", true},
		{[]string{"http://127.0.0.1:8080/mcp"}, "127-0-0-1", true},
		{[]string{"http://localhost:3000/sse"}, "localhost", true},
		{[]string{"https://mcp.example.com/mcp", "x"}, "mcp", false}, // two words: a command
		{[]string{"ftp://example.com"}, "example", false},
	}
	for _, tt := range tests {
		cfg := inlineServer(tt.cmdline)
		if cfg.ID != tt.id {
			t.Errorf("%q: ID %q, want %q", tt.cmdline, cfg.ID, tt.id)
		}
		if again := inlineServer(tt.cmdline); again.ID != cfg.ID {
			t.Errorf("%q: ID not stable: %q then %q", tt.cmdline, cfg.ID, again.ID)
		}
		if tt.url != (cfg.URL != "") || tt.url == (cfg.Command != "") {
			t.Errorf("%q: URL %q, Command %q; want a URL: %v", tt.cmdline, cfg.URL, cfg.Command, tt.url)
		}
		for _, r := range cfg.ID {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				t.Errorf("%q: ID %q has %q", tt.cmdline, cfg.ID, r)
			}
		}
	}
}

// TestInlineCommands runs probe, tools and call with no file: the test binary as a real stdio
// go-sdk server after "--", and a Streamable HTTP go-sdk server by its URL.
func TestInlineCommands(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverEnv, "basic") // the child reads it; this process is past TestMain
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer("mini") }, nil))
	defer srv.Close()
	id := inlineID(commandName([]string{bin}))

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{name: "probe", args: []string{"probe", "--", bin}, stdout: id + "  ok"},
		{name: "probe json flag before --", args: []string{"probe", "--json", "--", bin}, stdout: `"id": "` + id + `"`},
		{name: "probe url", args: []string{"probe", "--", srv.URL + "/mcp"}, stdout: "127-0-0-1  ok"},
		{name: "tools", args: []string{"tools", "--", bin}, stdout: "echo"},
		{name: "call", args: []string{"call", "echo", `{"text":"hi"}`, "--", bin}, stdout: "basic says: hi"},
		{name: "call default args", args: []string{"call", "--timeout", "30s", "fail", "--", bin}, code: 2},
		{name: "nothing after --", args: []string{"probe", "--"}, code: 1, stderr: "nothing after --"},
		{name: "file and --", args: []string{"probe", "servers.yaml", "--", bin}, code: 1, stderr: "want no arguments before it (no FILE), got 1"},
		{name: "call without tool", args: []string{"call", "--", bin}, code: 1, stderr: "want 1 to 2 arguments before it"},
		{name: "call too many", args: []string{"call", "a", "{}", "x", "--", bin}, code: 1, stderr: "got 3"},
		{name: "no file hint", args: []string{"tools"}, code: 1, stderr: "(FILE, or one server after --)"},
		{name: "login takes no --", args: []string{"login", "--", bin}, code: 1},
		{name: "missing command", args: []string{"probe", "--", "/nonexistent/mcp-server"}, code: 2, stdout: "mcp-server  FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
		})
	}
}

// TestProbeNPMError: a server npx cannot install is summed up by npm's E404 line, not by the
// pointer to npm's log that ends its stderr.
func TestProbeNPMError(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(serverEnv, "npm404")
	stdout, stderr, code := runCLI(t, "probe", "--", bin)
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	want := `npm: "npm error code E404: 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-doesnotexist-xyz"`
	summary := func(out, prefix string) string {
		for l := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return l
			}
		}
		return ""
	}
	for what, line := range map[string]string{"the progress line": summary(stderr, "✗"), "the report's error line": summary(stdout, "error ")} {
		if !strings.Contains(line, want) || strings.Contains(line, "complete log") {
			t.Errorf("%s does not quote npm's error line %s:\n%s", what, want, line)
		}
	}
}

// TestCallDialsOwner: call starts only the server that owns the tool when the name (a
// SERVER__TOOL prefix) or the listing cache says which; real go-sdk servers (the test binary
// re-executed) and two that fail when dialled (broken exits, missing does not exist), whose
// failures on stderr show they were dialled.
func TestCallDialsOwner(t *testing.T) {
	f := writeFixture(t, "claude_desktop.json", false)
	cache := filepath.Join(f.dir, "tools.json")
	dialledOthers := func(stderr string) bool {
		return strings.Contains(stderr, "broken") || strings.Contains(stderr, "missing")
	}
	steps := []struct {
		name    string
		args    []string
		stdout  string
		dialAll bool
		cached  bool // the cache file exists afterwards
	}{
		{name: "prefix", args: []string{"call", f.path, "basic__echo", `{"text":"hi"}`}, stdout: "basic says: hi"},
		{name: "prefix of the other server", args: []string{"call", f.path, "second__echo", `{"text":"yo"}`}, stdout: "mini says: yo"},
		{name: "no cache yet: every server", args: []string{"call", "--cache", cache, f.path, "do_thing"}, stdout: "done", dialAll: true, cached: true},
		{name: "cached: one server", args: []string{"call", f.path, "do_thing", "--cache", cache}, stdout: "done", cached: true},
		{name: "no cache flag: every server", args: []string{"call", f.path, "do_thing"}, stdout: "done", dialAll: true, cached: true},
		{name: "prefix not a server ID: every server", args: []string{"call", f.path, "nosuch__echo"}, dialAll: true, cached: true},
	}
	for _, st := range steps {
		stdout, stderr, code := runCLI(t, st.args...)
		if !strings.Contains(stdout, st.stdout) || st.stdout != "" && code != 0 {
			t.Errorf("%s: exit %d, stdout %q, want %q\nstderr:\n%s", st.name, code, stdout, st.stdout, stderr)
		}
		if got := dialledOthers(stderr); got != st.dialAll {
			t.Errorf("%s: the other servers dialled: %v, want %v\nstderr:\n%s", st.name, got, st.dialAll, stderr)
		}
		if _, err := os.Stat(cache); (err == nil) != st.cached {
			t.Errorf("%s: cache file exists: %v, want %v", st.name, err == nil, st.cached)
		}
	}

	// A stale cache (the tool is not on the server it names) falls back to every server; an
	// oversized or malformed one is ignored.
	for _, bad := range []string{`{"tools":{"do_thing":{"server":"second","remote":"do.thing"}}}`, `[1,2]`, `{"tools":` + strings.Repeat(" ", maxToolCacheBytes) + `{}}`} {
		if err := os.WriteFile(cache, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCLI(t, "call", "--cache", cache, f.path, "do_thing")
		if code != 0 || !strings.Contains(stdout, "done") || !dialledOthers(stderr) {
			t.Errorf("cache %.40q: exit %d, stdout %q\nstderr:\n%s", bad, code, stdout, stderr)
		}
	}
}
