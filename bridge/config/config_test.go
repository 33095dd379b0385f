package config

import (
	"errors"
	"fmt"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/slack"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mapEnv is a lookupFunc over a map.
func mapEnv(m map[string]string) lookupFunc {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "config", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// diffServers describes how got differs from want, field by field, or returns "".
func diffServers(got, want []ServerConfig) string {
	var b strings.Builder
	if len(got) != len(want) {
		fmt.Fprintf(&b, "got %d servers %v, want %d %v\n", len(got), ids(got), len(want), ids(want))
		return b.String()
	}
	for i := range got {
		g, w := reflect.ValueOf(got[i]), reflect.ValueOf(want[i])
		for f := 0; f < g.NumField(); f++ {
			if !reflect.DeepEqual(g.Field(f).Interface(), w.Field(f).Interface()) {
				fmt.Fprintf(&b, "server %d (%s): %s = %#v, want %#v\n", i, want[i].ID, g.Type().Field(f).Name,
					g.Field(f).Interface(), w.Field(f).Interface())
			}
		}
	}
	return b.String()
}

func ids(cfgs []ServerConfig) []string {
	out := make([]string, len(cfgs))
	for i, c := range cfgs {
		out[i] = c.ID
	}
	return out
}

func TestParseConfigDialects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		env      map[string]string
		want     []ServerConfig
		warnings []string // substrings, one per expected warning, in order
	}{
		{
			file: "claude_desktop.json",
			want: []ServerConfig{
				{ID: "filesystem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"},
					Env: map[string]string{"DEBUG": "1", "PORT": "8080", "VERBOSE": "true"}, Source: "claude_desktop.json:3"},
				{ID: "sqlite", Command: "uvx", Args: []string{"mcp-server-sqlite", "--db-path", "/tmp/test.db"}, Source: "claude_desktop.json:8"},
			},
		},
		{
			file: "claude_code.mcp.json",
			env:  map[string]string{"GH_TOKEN": "ghp_secret"},
			want: []ServerConfig{
				{ID: "gh", Type: TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env: map[string]string{"GITHUB_TOKEN": "ghp_secret"}, Source: "claude_code.mcp.json:3"},
				{ID: "api", Type: TypeHTTP, URL: "https://api.example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer none"}, Source: "claude_code.mcp.json:9"},
				{ID: "old", Type: TypeSSE, URL: "https://legacy.example.com/sse", Source: "claude_code.mcp.json:14"},
				{ID: "dyn", Type: TypeHTTP, URL: "https://dyn.example.com/mcp", Source: "claude_code.mcp.json:15"},
			},
			warnings: []string{`claude_code.mcp.json:15: server "dyn": "headersHelper" is not supported by mcpbridge; ignored`},
		},
		{
			file: "vscode.json",
			env:  map[string]string{"LOCAL_KEY": "lk"},
			want: []ServerConfig{
				{ID: "local", Type: TypeStdio, Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"KEY": "lk"}, Source: "vscode.json:6"},
				{ID: "legacy", Type: TypeSSE, URL: "https://h.example.com/sse", Source: "vscode.json:17"},
			},
			warnings: []string{`vscode.json:15: server "remote": headers.Authorization: ${input:api-key} is a VS Code input prompt and cannot be resolved outside VS Code; skipped`},
		},
		{
			file: "cursor.json",
			env:  map[string]string{"CURSOR_TOKEN": "ct"},
			want: []ServerConfig{
				{ID: "local", Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"API_KEY": "k"}, Source: "cursor.json:3"},
				{ID: "remote", URL: "https://api.example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer ct", "X-Tenant": "acme"}, Source: "cursor.json:4"},
			},
		},
		{
			file: "windsurf.json",
			env:  map[string]string{"GH_TOKEN": "g", "AUTH_TOKEN": "a"},
			want: []ServerConfig{
				{ID: "gh", Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"T": "g"}, Source: "windsurf.json:3"},
				{ID: "api", URL: "https://h.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer a"}, Source: "windsurf.json:4"},
			},
		},
		{
			file: "gemini.json",
			env:  map[string]string{"MY_TOKEN": "not used: $VAR is left alone"},
			want: []ServerConfig{
				{ID: "py", Command: "python", Args: []string{"s.py"}, Env: map[string]string{"K": "$MY_TOKEN"}, Dir: "./srv",
					CallTimeout: 30 * time.Second, Include: []string{"t1", "read_*"}, Exclude: []string{"t2"}, Source: "gemini.json:5"},
				{ID: "events", URL: "https://h.example.com/sse", Source: "gemini.json:15"},
				{ID: "stream", Type: TypeHTTP, URL: "https://h.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"},
					CallTimeout: 5 * time.Second, Source: "gemini.json:16"},
			},
		},
		{
			file: "mcphost.yaml",
			env:  map[string]string{"WEBSEARCH_TOKEN": "wt", "DEBUG": ""},
			want: []ServerConfig{
				{ID: "fs", Type: TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
					Env: map[string]string{"DEBUG": "false", "LEVEL": "3"}, Include: []string{"read_file"}, Source: "mcphost.yaml:2"},
				{ID: "web", Type: TypeHTTP, URL: "https://api.example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer wt", "X-Client": "mcphost"}, Source: "mcphost.yaml:7"},
				{ID: "legacy", Type: TypeStdio, Command: "node", Args: []string{"server.js"}, Env: map[string]string{"A": "b"}, Source: "mcphost.yaml:12"},
			},
			warnings: []string{`mcphost.yaml:11: server "todo": type "builtin" is an in-process server of another client; skipped`},
		},
		{
			file: "bridge.yaml",
			env:  map[string]string{"HOME": "/home/u", "API_TOKEN": "tok"},
			want: []ServerConfig{
				{ID: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/data"},
					Env: map[string]string{"DEBUG": "0"}, Dir: "/srv", Required: true, Prefix: "files",
					Include: []string{"read_*", "list_*"}, Exclude: []string{"*_secret"},
					ConnectTimeout: 30 * time.Second, CallTimeout: 2 * time.Minute, Source: "bridge.yaml:7"},
				{ID: "api", URL: "https://h.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer tok"},
					CallTimeout: 1500 * time.Millisecond, Source: "bridge.yaml:15"},
				{ID: "events", Type: TypeSSE, URL: "https://h.example.com/sse", ConnectTimeout: 2500 * time.Millisecond,
					CallTimeout: 45 * time.Second, Source: "bridge.yaml:20"},
				{ID: "codex", Command: "codex-mcp", ConnectTimeout: 20 * time.Second, CallTimeout: 120 * time.Second,
					Include: []string{"read_file"}, Exclude: []string{"write_file"}, Source: "bridge.yaml:25"},
			},
		},
		{
			file: "foreign_keys.json",
			want: []ServerConfig{
				{ID: "cline", Command: "node", Args: []string{"index.js"}, CallTimeout: 60 * time.Second, Source: "foreign_keys.json:3"},
			},
			warnings: []string{
				`foreign_keys.json:8: server "cline": timeout 60 is read as seconds (Cline)`,
				`foreign_keys.json:9: server "cline": unknown key "networkTimeout" ignored`,
				`foreign_keys.json:10: server "cline": "oauth" is for remote (url) servers; ignored`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			cf, err := parseConfig(readFixture(t, tt.file), tt.file, mapEnv(tt.env))
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if d := diffServers(cf.Servers, tt.want); d != "" {
				t.Error(d)
			}
			if len(cf.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d like %q", cf.Warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(cf.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, cf.Warnings[i], w)
				}
			}
		})
	}
}

func TestConfigMapOrderKept(t *testing.T) {
	t.Parallel()
	cf, err := parseConfig(readFixture(t, "order.yaml"), "order.yaml", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zeta", "alpha", "mike", "bravo", "yankee", "charlie", "xray", "whiskey", "echo", "victor",
		"foxtrot", "golf", "07", "hotel"}
	if got := ids(cf.Servers); !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	for i, c := range cf.Servers {
		if wantSrc := fmt.Sprintf("order.yaml:%d", i+2+boolInt(i >= 7)); c.Source != wantSrc {
			t.Errorf("%s: Source = %q, want %q", c.ID, c.Source, wantSrc)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		env  map[string]string
		want []string // substrings of the error
		not  []string // must not appear
	}{
		{file: "bad_yaml.yaml", want: []string{"bad_yaml.yaml:4: did not find expected ',' or ']' (in the list or map that starts here)"}},
		{file: "typo.yaml", want: []string{
			`typo.yaml:4: server "fs": unknown key "requird" (did you mean "required"?)`,
			`typo.yaml:8: server "web": unknown key "incldue" in tools`,
			`typo.yaml:9: server "web": unknown key "conect" in timeouts`,
		}},
		{file: "unset.yaml", want: []string{`unset.yaml:5: server "api": headers.Authorization: ${API_TOKEN} is not set`},
			not: []string{"hunter2"}},
		{file: "duplicate.json", want: []string{`duplicate.json:5: server "fs" defined twice (first at line 3)`}},
		{file: "both_maps.json", want: []string{`both_maps.json:3: both "servers" (line 2) and "mcpServers" hold servers`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			cf, err := parseConfig(readFixture(t, tt.file), tt.file, mapEnv(tt.env))
			if err == nil {
				t.Fatalf("no error; servers %v", ids(cf.Servers))
			}
			if cf != nil {
				t.Errorf("ConfigFile %v returned with an error", cf)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("error %q contains %q", err, n)
				}
			}
		})
	}
}

func TestParseConfigInline(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-VALUE"
	env := map[string]string{"SECRET": secret, "EMPTY": ""}
	tests := []struct {
		name    string
		in      string
		want    []string // error substrings; none means success
		ids     []string // on success
		warning string   // on success, a substring of the only warning
	}{
		{name: "empty file", in: "", want: []string{"x.yaml: empty file"}},
		{name: "top level list", in: "- a\n- b\n", want: []string{"x.yaml:1: want a map"}},
		{name: "no servers", in: "mcpServer:\n  a: {command: a}\n", want: []string{`x.yaml:1: no "servers" or "mcpServers" map (line 1 has "mcpServer": did you mean "mcpServers"?)`}},
		{name: "servers is a list", in: "servers:\n  - a\n", want: []string{`x.yaml:2: "servers" must be a map`}},
		{name: "servers null", in: "servers:\n", ids: []string{}, warning: `x.yaml:1: "servers" is empty`},
		{name: "vs code user settings", in: `{"mcp": {"servers": {"a": {"command": "a"}}}}`, ids: []string{"a"}},
		{name: "gemini allowed", in: "mcp: {allowed: [b, nope]}\nmcpServers:\n  a: {command: a}\n  b: {command: b}\n",
			ids: []string{"b"}, warning: `"nope", which is not a server here`},
		{name: "empty id", in: "servers:\n  \"\": {command: a}\n", want: []string{"x.yaml:2: server names must not be empty"}},
		{name: "server not a map", in: "servers:\n  a: npx\n", want: []string{`x.yaml:2: server "a": want a map of settings`}},
		{name: "neither", in: "servers:\n  a:\n    env: {A: b}\n", want: []string{`x.yaml:2: server "a": has neither a command nor a url`}},
		{name: "both", in: "servers:\n  a:\n    command: x\n    url: https://h/mcp\n", want: []string{`x.yaml:4: server "a": has both a command (line 3) and a url`}},
		{name: "stdio with url", in: "servers:\n  a:\n    type: stdio\n    url: https://h/mcp\n", want: []string{`x.yaml:3: server "a": type stdio needs a command`}},
		{name: "http with command", in: "servers:\n  a:\n    type: streamableHttp\n    command: x\n", want: []string{`x.yaml:3: server "a": type http needs a url`}},
		{name: "unknown type", in: "servers:\n  a:\n    type: websocket\n    url: wss://h\n", want: []string{`x.yaml:3: server "a": unknown type "websocket" (want stdio, http or sse)`}},
		{name: "httpUrl with sse", in: "servers:\n  a:\n    type: sse\n    httpUrl: https://h/mcp\n", want: []string{`x.yaml:3: server "a": type sse contradicts httpUrl`}},
		{name: "two urls", in: "servers:\n  a:\n    url: https://h/mcp\n    serverUrl: https://h/mcp\n", want: []string{`x.yaml:4: server "a": "serverUrl" and "url" (line 3) both set the URL`}},
		{name: "include twice", in: "servers:\n  a:\n    command: x\n    tools: {include: [a]}\n    includeTools: [b]\n", want: []string{`x.yaml:5: server "a": "includeTools" and "include" (line 4) both set the tool include list`}},
		{name: "command list and args", in: "servers:\n  a:\n    command: [x, y]\n    args: [z]\n", want: []string{`x.yaml:4: server "a": give arguments either in the command list or in args`}},
		{name: "empty command list", in: "servers:\n  a:\n    command: []\n", want: []string{`x.yaml:3: server "a": command list is empty`}},
		{name: "args not a list", in: "servers:\n  a:\n    command: x\n    args: -v\n", want: []string{`x.yaml:4: server "a": args must be a list`}},
		{name: "args item a map", in: "servers:\n  a:\n    command: x\n    args: [{a: b}]\n", want: []string{`x.yaml:4: server "a": args[0] must be a string`}},
		{name: "command case", in: "servers:\n  a:\n    Command: x\n", want: []string{`x.yaml:3: server "a": unknown key "Command" (did you mean "command"?)`}},
		{name: "comand", in: "servers:\n  a:\n    comand: x\n", want: []string{`unknown key "comand" (did you mean "command"?)`}},
		{name: "zero duration", in: "servers:\n  a:\n    command: x\n    timeouts: {call: 0s}\n", want: []string{`x.yaml:4: server "a": timeouts.call must be greater than 0`}},
		{name: "negative ms", in: "servers:\n  a:\n    command: x\n    callTimeout: -5\n", want: []string{`callTimeout must be greater than 0`}},
		{name: "no unit", in: "servers:\n  a:\n    command: x\n    timeouts: {connect: 30}\n", want: []string{`timeouts.connect: 30 has no unit (write 30s)`}},
		{name: "bad duration", in: "servers:\n  a:\n    command: x\n    timeouts: {connect: soon}\n", want: []string{`timeouts.connect: time: invalid duration`}},
		{name: "huge duration", in: "servers:\n  a:\n    command: x\n    tool_timeout_sec: 1e300\n", want: []string{`tool_timeout_sec: 1e300 is not a usable number`}},
		{name: "timeouts.list", in: "servers:\n  a:\n    command: x\n    timeouts: {list: 5s}\n", want: []string{`timeouts.list is not supported`}},
		{name: "bad glob", in: "servers:\n  a:\n    command: x\n    tools: {exclude: [\"[a\"]}\n", want: []string{`x.yaml:4: server "a": tools.exclude: bad pattern "[a": syntax error in pattern`}},
		{name: "glob string", in: "servers:\n  a:\n    command: x\n    excludeTools: \"write_*\"\n", ids: []string{"a"}},
		{name: "tools not a map", in: "servers:\n  a:\n    command: x\n    tools: [a]\n", want: []string{`tools must be a map`}},
		{name: "bool", in: "servers:\n  a:\n    command: x\n    required: yes\n", want: []string{`x.yaml:4: server "a": required must be true or false`}},
		{name: "env value map", in: "servers:\n  a:\n    command: x\n    env: {A: {b: c}}\n", want: []string{`x.yaml:4: server "a": env.A must be a string`}},
		{name: "env null value", in: "servers:\n  a:\n    command: x\n    env: {A: null}\n", ids: []string{"a"}},
		{name: "null key ignored", in: "servers:\n  a:\n    command: x\n    url: null\n    env: null\n", ids: []string{"a"}},
		{name: "header list bad", in: "servers:\n  a:\n    url: https://h/mcp\n    headers: [\"no colon\"]\n", want: []string{`x.yaml:4: server "a": headers[0] must be a "Name: value" string`}},
		{name: "header list dup", in: "servers:\n  a:\n    url: https://h/mcp\n    headers: [\"A: 1\", \"a: 2\"]\n", want: []string{`header "a" given twice (first at line 4)`}},
		{name: "header bad name", in: "servers:\n  a:\n    url: https://h/mcp\n    headers: {\"A B\": x}\n", want: []string{`invalid header name "A B"`}},
		{name: "header case dup", in: "servers:\n  a:\n    url: https://h/mcp\n    headers: {A: x, a: y}\n", want: []string{`x.yaml:4: server "a": headers "A" and "a" are the same header`}},
		{name: "header newline", in: "servers:\n  a:\n    url: https://h/mcp\n    headers: {A: \"x\\ny\"}\n", want: []string{`headers.A: value contains a line break`}},
		{name: "url not http", in: "servers:\n  a:\n    url: \"ftp://u:${SECRET}@h/x?k=${SECRET}\"\n", want: []string{`x.yaml:3: server "a": url is not an http:// or https:// URL`}},
		{name: "url unset var", in: "servers:\n  a:\n    url: \"https://h/mcp?key=${NOPE}\"\n", want: []string{`x.yaml:3: server "a": url: ${NOPE} is not set`}},
		{name: "command empty after expansion", in: "servers:\n  a:\n    command: \"${EMPTY}\"\n", want: []string{`x.yaml:3: server "a": command is empty`}},
		{name: "unset in arg", in: "servers:\n  a:\n    command: x\n    args: [a, \"--key=${KEY}\"]\n", want: []string{`x.yaml:4: server "a": args[1]: ${KEY} is not set`}},
		{name: "unset in env", in: "servers:\n  a:\n    command: x\n    env:\n      TOKEN: \"${env:TOKEN}\"\n", want: []string{`x.yaml:5: server "a": env.TOKEN: ${env:TOKEN} is not set`}},
		{name: "unset in cwd", in: "servers:\n  a:\n    command: x\n    cwd: \"${WS}/srv\"\n", want: []string{`x.yaml:4: server "a": cwd: ${WS} is not set`}},
		{name: "malformed ref", in: "servers:\n  a:\n    command: \"${a b}\"\n", want: []string{`x.yaml:3: server "a": command: malformed variable reference`}},
		{name: "unsupported ref", in: "servers:\n  a:\n    command: x\n    args: [\"${file:/etc/passwd}\"]\n", want: []string{`args[0]: ${file:...} references are not supported`}},
		{name: "required input", in: "servers:\n  a:\n    url: https://h/mcp\n    required: true\n    headers: {A: \"${input:tok}\"}\n", want: []string{`x.yaml:5: server "a": headers.A: ${input:tok} is a VS Code input prompt`}},
		{name: "many errors", in: "servers:\n  a:\n    command: x\n    requird: true\n  b:\n    url: https://h\n    type: nope\n", want: []string{`requird`, `"nope"`}},
		{name: "disabled skips expansion", in: "servers:\n  a:\n    command: \"${NOPE}\"\n    disabled: true\n", ids: []string{}},
		{name: "disabled still checks keys", in: "servers:\n  a:\n    command: x\n    disabled: true\n    requird: true\n", want: []string{`unknown key "requird"`}},
		{name: "anchors", in: "x: &args [a, b]\nservers:\n  a:\n    command: x\n    args: *args\n", ids: []string{"a"}},
		{name: "merge list", in: "b1: &b1 {command: x}\nb2: &b2 {required: true}\nservers:\n  a:\n    <<: [*b1, *b2]\n", ids: []string{"a"}},
		{name: "bad merge", in: "servers:\n  a:\n    <<: [1]\n    command: x\n", want: []string{`x.yaml:3: a merge (<<) needs a map`}},
		{name: "dup key", in: "servers:\n  a:\n    command: x\n    command: y\n", want: []string{`x.yaml:4: key "command" defined twice (first at line 3)`}},
		{name: "unknown key warning", in: "servers:\n  a:\n    command: x\n    frobnicate: 1\n", ids: []string{"a"}, warning: `x.yaml:4: server "a": unknown key "frobnicate" ignored`},
		{name: "headers on stdio", in: "servers:\n  a:\n    command: x\n    headers: {A: \"${NOPE}\"}\n", ids: []string{"a"}, warning: `"headers" is for remote (url) servers; ignored`},
		{name: "env on remote", in: "servers:\n  a:\n    url: https://h/mcp\n    env: {A: \"${NOPE}\"}\n", ids: []string{"a"}, warning: `"env" is for local (command) servers; ignored`},
		{name: "inline json", in: `{"mcpServers":{"b":{"command":"b"},"a":{"url":"http://127.0.0.1:1/mcp"}}}`, ids: []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cf, err := parseConfig([]byte(tt.in), "x.yaml", mapEnv(env))
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks a secret: %v", err)
			}
			if len(tt.want) > 0 {
				if err == nil {
					t.Fatalf("no error; servers %v, warnings %q", ids(cf.Servers), cf.Warnings)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\ndoes not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(cf.Servers); !reflect.DeepEqual(got, tt.ids) {
				t.Errorf("ids = %v, want %v", got, tt.ids)
			}
			switch {
			case tt.warning == "" && len(cf.Warnings) > 0:
				t.Errorf("unexpected warnings %q", cf.Warnings)
			case tt.warning != "" && (len(cf.Warnings) != 1 || !strings.Contains(cf.Warnings[0], tt.warning)):
				t.Errorf("warnings = %q, want one containing %q", cf.Warnings, tt.warning)
			}
			for _, w := range cf.Warnings {
				if strings.Contains(w, secret) {
					t.Errorf("warning leaks a secret: %q", w)
				}
			}
		})
	}
}

// TestConfigSecretsNeverPrinted gives every variable a secret value and checks that no
// error or warning about the fixtures and broken variants of them contains it.
func TestConfigSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const secret = "TOPSECRET-9f8e"
	env := func(string) (string, bool) { return secret, true }
	inputs := []string{
		"servers:\n  a:\n    url: \"${X}\"\n",
		"servers:\n  a:\n    url: \"https://h/${X}\"\n    headers: {A: \"${X}\\n\"}\n",
		"servers:\n  a:\n    command: \"${X}\"\n    url: \"${X}\"\n",
		"servers:\n  a:\n    command: x\n    env: {A: \"${X}\", B: \"${Y\"}\n",
		"servers:\n  a:\n    url: https://h/mcp\n    required: true\n    headers: [\"A: ${X}\", \"B: ${input:b}\"]\n",
	}
	for _, f := range []string{"claude_code.mcp.json", "vscode.json", "cursor.json", "windsurf.json", "mcphost.yaml", "bridge.yaml"} {
		inputs = append(inputs, string(readFixture(t, f)))
	}
	for i, in := range inputs {
		cf, err := parseConfig([]byte(in), "x.yaml", env)
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("input %d: error leaks the secret: %v", i, err)
		}
		if cf != nil {
			for _, w := range cf.Warnings {
				if strings.Contains(w, secret) {
					t.Errorf("input %d: warning leaks the secret: %q", i, w)
				}
			}
			for _, s := range cf.Servers {
				if str := fmt.Sprint(s); strings.Contains(str, secret) && !strings.Contains(s.Command+strings.Join(s.Args, " "), secret) {
					t.Errorf("input %d: %s leaks the secret", i, str)
				}
			}
		}
	}
}

func TestReadConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "config", "order.yaml")
	servers, _, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := servers[0].Source, path+":2"; got != want {
		t.Errorf("Source = %q, want %q", got, want)
	}
	_, _, err = Read(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxConfigSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: err = %v", err)
	}
}

// TestLoadConfigEnv uses the process environment, so it does not run in parallel.
func TestLoadConfigEnv(t *testing.T) {
	t.Setenv("MCPBRIDGE_TEST_TOKEN", "tok")
	path := filepath.Join(t.TempDir(), "servers.yaml")
	data := "servers:\n  a:\n    url: https://h/mcp\n    headers: {Authorization: \"Bearer ${MCPBRIDGE_TEST_TOKEN}\"}\n    oauth: {}\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 1 || cfgs[0].Headers["Authorization"] != "Bearer tok" {
		t.Errorf("LoadConfig = %v", cfgs)
	}
	cf, err := parseConfig([]byte(data), "p.yaml", os.LookupEnv)
	if err != nil || len(cf.Warnings) != 0 || cf.Servers[0].Auth == nil || cf.Servers[0].Auth.Type != auth.AuthOAuth {
		t.Errorf("parseConfig = %v, %v (Gemini's oauth block is read as OAuth)", cf, err)
	}
}

// TestConfigAliasBomb checks that "billion laughs" of aliases and merge keys are refused
// quickly.
func TestConfigAliasBomb(t *testing.T) {
	t.Parallel()
	bomb := func(item, ref string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "a0: &a0 %s\n", item)
		for i := 1; i < 8; i++ {
			refs := strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10)
			fmt.Fprintf(&b, "a%d: &a%d "+ref+"\n", i, i, refs[:len(refs)-2])
		}
		return b.String()
	}
	tests := []struct{ name, in, want string }{
		{"args", bomb("[x, x, x, x, x, x, x, x, x, x]", "[%s]") + "servers:\n  a:\n    command: x\n    args: *a7\n", "args[0] must be a string"},
		{"merge", bomb("{k0: 1, k1: 2, k2: 3, k3: 4, k4: 5, k5: 6, k6: 7, k7: 8, k8: 9, k9: 0}", "{<<: [%s]}") +
			"servers:\n  a:\n    command: x\n    env: {<<: *a7}\n", "file too complex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := parseConfig([]byte(tt.in), "x.yaml", mapEnv(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			slack.Within(t, "parsing", time.Since(start), 0)
		})
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, want string }{
		{"comand", "command"}, {"requird", "required"}, {"Command", "command"}, {"URL", "url"},
		{"arg", "args"}, {"envv", "env"}, {"timeots", "timeouts"}, {"heders", "headers"},
		{"trust", ""}, {"autoApprove", ""}, {"foo", ""}, {"name", ""}, {"command", ""},
		{"networkTimeout", ""}, {"oauth", ""},
	}
	for _, tt := range tests {
		if got := nearest(tt.key, readKeyNames()); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "config"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		f.Add(readFixture(f, e.Name()))
	}
	f.Add([]byte("servers:\n  a: {command: [x, \"${A:-${B}}\"], timeouts: {call: 1s}, <<: {url: x}}\n"))
	f.Add([]byte(`{"mcpServers":{"a":{"httpUrl":"https://h/${X}","headers":["A: ${input:x}"]}}}`))
	const secret = "fuzz-SECRET-value"
	env := func(string) (string, bool) { return secret, true }
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := parseConfig(data, "f.yaml", env)
		if (cf == nil) == (err == nil) {
			t.Fatalf("cf = %v, err = %v: want exactly one", cf, err)
		}
		leakable := !strings.Contains(string(data), secret)
		if err != nil {
			if leakable && strings.Contains(err.Error(), secret) {
				t.Fatalf("error leaks a value: %v", err)
			}
			return
		}
		for _, w := range cf.Warnings {
			if leakable && strings.Contains(w, secret) {
				t.Fatalf("warning leaks a value: %q", w)
			}
		}
		seen := map[string]bool{}
		for _, s := range cf.Servers {
			if s.ID == "" || s.Source == "" || seen[s.ID] {
				t.Fatalf("bad server %#v (seen %v)", s, seen[s.ID])
			}
			seen[s.ID] = true
			if (s.Command == "") == (s.URL == "") {
				t.Fatalf("server %s: want exactly one of command and url", s.ID)
			}
			if s.ConnectTimeout < 0 || s.CallTimeout < 0 {
				t.Fatalf("server %s: negative timeout", s.ID)
			}
		}
	})
}

func TestConfigErrorLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("servers:\n")
	for i := range MaxErrors + 5 {
		fmt.Fprintf(&b, "  s%d: {env: {}}\n", i)
	}
	_, err := parseConfig([]byte(b.String()), "x.yaml", mapEnv(nil))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxErrors+1 || lines[MaxErrors] != "x.yaml: and 5 more problems" {
		t.Errorf("got %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
