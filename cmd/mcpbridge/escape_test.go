package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lmittmann/tint"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
)

// rawControl reports the first raw control character in out that a terminal could act on:
// any C0 other than '\n' (and '\t' when tabs is set), a '\r' not before '\n', DEL, a C1
// control, or invalid UTF-8. It returns -1 when out is clean.
func rawControl(out string, tabs bool) int {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i
		case r == '\n', tabs && r == '\t':
		case r == '\r' && i+1 < len(out) && out[i+1] == '\n':
		case isControl(r):
			return i
		}
		i += size
	}
	return -1
}

func TestEscapeText(t *testing.T) {
	tests := []struct {
		in, line, block string
	}{
		{"plain ✓ text", "plain ✓ text", "plain ✓ text"},
		{"clear\x1b[2Jscreen", `clear\u001b[2Jscreen`, `clear\u001b[2Jscreen`},
		{"osc52\x1b]52;c;Zm9v\x07", `osc52\u001b]52;c;Zm9v\u0007`, `osc52\u001b]52;c;Zm9v\u0007`},
		{"a\nb\tc", `a\u000ab\u0009c`, "a\nb\tc"},
		{"fake\rline", `fake\u000dline`, `fake\u000dline`},
		{"crlf\r\nok", `crlf\u000d\u000aok`, "crlf\r\nok"},
		{"del\x7f c1\u009b31m", `del\u007f c1\u009b31m`, `del\u007f c1\u009b31m`},
		{"bad\xffutf8", "bad\uFFFDutf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := escapeText(tt.in, false); got != tt.line {
			t.Errorf("escapeText(%q, line) = %q, want %q", tt.in, got, tt.line)
		}
		if got := escapeText(tt.in, true); got != tt.block {
			t.Errorf("escapeText(%q, block) = %q, want %q", tt.in, got, tt.block)
		}
	}
}

// hostileStrings is what the fuzz target starts from: the attacks the issue lists.
var hostileStrings = []string{
	"\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x1b]52;c;cm0gLXJmIH4=\x07", "ok\rFAKE", "\u009b31m", "\x7f",
	`\x1b[31m`, "line\nnext\ttab", "\xff\xfe", "\x1bP+q\x1b\\", "",
}

// FuzzNoRawControlReachesTerminal feeds server-controlled text through every human output of
// the CLI (probe report, tools list, call output, progress lines, error lines, tint log lines)
// and through its JSON outputs, and checks that no raw control character comes out and that
// JSON stays valid.
func FuzzNoRawControlReachesTerminal(f *testing.F) {
	for _, s := range hostileStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(what, out string, tabs bool) {
			t.Helper()
			if i := rawControl(out, tabs); i >= 0 {
				t.Fatalf("%s: raw control at byte %d: %q", what, i, out)
			}
		}
		// probe report: every field a server or config controls.
		rep := &probeReport{File: s, Error: s, Servers: []serverReport{{
			ID: s, Config: s, Source: s, Transport: s, ServerName: s, ServerVersion: s, ProtocolVersion: s,
			Tools: []string{s}, AppOnly: []string{s}, AppTools: []appTool{{Name: s, ResourceURI: s}}, Counts: &toolCounts{},
			Renamed: []bridge.Rename{{Remote: s, Name: s, Reason: s}}, Problems: []problem{{Tool: s, Problem: s, Source: s}},
		}, {ID: s, Error: &failure{Phase: s, Message: s, Stderr: []string{s, s}}}}}
		var out bytes.Buffer
		if err := writeReport(&out, rep); err != nil {
			t.Fatal(err)
		}
		check("probe", out.String(), false)

		// tools list
		key, _ := json.Marshal(s)
		params := json.RawMessage(`{"type":"object","properties":{` + string(key) + `:{"type":` + string(key) + `}}}`)
		out.Reset()
		if err := writeTools(&out, bridge.Tools{{Name: s, Description: s + "\n" + s, Parameters: params, RemoteName: s + "x"}}, tokens.New()); err != nil {
			t.Fatal(err)
		}
		check("tools", out.String(), true)

		// call output, error lines
		check("call", escapeText(s, true), true)
		out.Reset()
		exitCode(errors.New(s), &out)
		check("error line", out.String(), true)

		// tint, without colour: every ESC would be the server's.
		out.Reset()
		log := slog.New(tint.NewTextHandler(&out, &tint.Options{NoColor: true, ReplaceAttr: escapeLogAttr}))
		log.Warn(s, "str", s, "err", errors.New(s), "list", []string{s, s}, slog.Group("g", "inner", s))
		check("log", out.String(), false)

		// JSON: valid, and no raw DEL or C1 (C0 are escaped by encoding/json).
		b, err := json.Marshal(bridge.Tools{{Name: s, Description: s, Parameters: params}})
		if err != nil {
			t.Fatal(err)
		}
		js := terminalJSON(b)
		if !json.Valid(js) {
			t.Fatalf("JSON output invalid: %s", js)
		}
		check("json", string(js), false)
		var back []map[string]any
		var want string
		ks, _ := json.Marshal(s)
		_ = json.Unmarshal(ks, &want)
		if err := json.Unmarshal(js, &back); err != nil || back[0]["name"] != want {
			t.Fatalf("JSON output changed the name: %v %v", back, err)
		}
	})
}

// In colour, tint turns "\x1b" in quoted values back into a raw ESC to keep colours; the
// escaped forms must survive that: every ESC in the output starts one of tint's colour codes.
func TestLogEscapesInColour(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(tint.NewTextHandler(&out, &tint.Options{NoColor: false, ReplaceAttr: escapeLogAttr}))
	for _, s := range hostileStrings {
		log.Warn("tool problem", "tool", s, "err", errors.New(s), "problem", s)
	}
	rest := sgrRE.ReplaceAllString(out.String(), "")
	if i := rawControl(rest, false); i >= 0 {
		t.Fatalf("raw control at %d outside colour codes: %q", i, rest)
	}
	if !strings.Contains(rest, `\u001b[2J`) {
		t.Errorf("the escaped payload is not visible: %q", rest)
	}
}

// hostileMCP is a Streamable HTTP MCP server (stateless, JSON responses) whose every string
// is an attack on the terminal: serverInfo, tool names, descriptions, schema keys, results.
func hostileMCP(t *testing.T) string {
	t.Helper()
	const evil = `\u001b]0;pwned\u0007\u001b[2J\rFAKE\u009b31m`
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"evil` + evil + `","version":"1` + evil + `"}}`
		case "tools/list":
			result = `{"tools":[{"name":"evil` + evil + `","description":"line one` + evil + `\nline two","inputSchema":{"type":"object","properties":{"k` + evil + `":{"type":"string` + evil + `"}}}},` +
				`{"name":"echo","description":"` + evil + `","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"result` + evil + `\nsecond line"}]}`
		default:
			result = `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// The CLI against a hostile server: probe, tools (text and JSON), call and the debug log
// never let a raw control character through.
func TestHostileServerCannotDriveTheTerminal(t *testing.T) {
	url := hostileMCP(t)
	path := filepath.Join(t.TempDir(), "servers.yaml")
	if err := os.WriteFile(path, []byte("servers:\n  evil:\n    url: "+url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"probe", path},
		{"probe", "--json", path},
		{"tools", path},
		{"tools", "--json", path},
		{"call", path, "echo", "{}"},
		{"probe", "-v", path},
	} {
		stdout, stderr, code := runCLI(t, args...)
		t.Logf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		if i := rawControl(stdout, true); i >= 0 {
			t.Errorf("%v: stdout has a raw control at %d: %q", args, i, stdout)
		}
		if i := rawControl(stderr, true); i >= 0 {
			t.Errorf("%v: stderr has a raw control at %d: %q", args, i, stderr)
		}
		if strings.Contains(args[1], "json") && !json.Valid([]byte(stdout)) {
			t.Errorf("%v: not valid JSON: %s", args, stdout)
		}
	}
}
