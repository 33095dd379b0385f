package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// rawTool is one tools/list entry with its inputSchema kept as the exact bytes the server sent.
type rawTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// rawMessage is any JSON-RPC message from the server.
type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// captureToolsList runs `node <bin of pkg> args...` and performs its own minimal JSON-RPC
// exchange over the process's stdin/stdout, independent of go-sdk and the bridge: initialize,
// notifications/initialized, tools/list (every page). It returns the tools in list order with
// their inputSchema bytes exactly as the server wrote them.
//
// The client advertises roots, sampling, elicitation and tasks capabilities plus the MCP Apps
// extension, so servers that register tools conditionally (server-everything) list a superset
// of what the bridge sees. Server-to-client requests (roots/list, ...) are answered.
func captureToolsList(t *testing.T, ctx context.Context, s *npmServers, pkg string, args ...string) []rawTool {
	t.Helper()
	cmd := exec.Command(s.node, append([]string{s.bins[pkg]}, args...)...)
	cmd.Dir = s.dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	// Plain OS pipes rather than cmd.StdinPipe/StdoutPipe: the reader below may still be
	// reading when startProcess's goroutine calls Wait.
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		t.Fatalf("stdin pipe: %v", err)
	}
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	startProcess(t, cmd) // its cleanup kills the group, so stdout reaches EOF
	_ = stdinR.Close()
	_ = stdoutW.Close()
	t.Cleanup(func() { _ = stdin.Close() })

	lines := make(chan []byte, 16)
	go func() {
		defer stdout.Close()
		defer close(lines)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()

	x := &rawExchange{t: t, ctx: ctx, stdin: stdin, lines: lines, stderr: stderr}
	x.request(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{
			"roots":       map[string]any{"listChanged": true},
			"sampling":    map[string]any{},
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"tasks": map[string]any{"requests": map[string]any{
				"sampling":    map[string]any{"createMessage": map[string]any{}},
				"elicitation": map[string]any{"create": map[string]any{}},
			}},
			"extensions": map[string]any{
				"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}},
			},
		},
		"clientInfo": map[string]any{"name": "mcpbridge-integration-raw", "version": "0.0.0"},
	})
	x.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})

	var tools []rawTool
	cursor := ""
	const maxPages = 20
	for page := 0; ; page++ {
		if page == maxPages {
			t.Fatalf("tools/list: more than %d pages", maxPages)
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := x.request(2+page, "tools/list", params)
		var list struct {
			Tools      []rawTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatalf("decode tools/list result: %v", err)
		}
		tools = append(tools, list.Tools...)
		if list.NextCursor == "" {
			break
		}
		cursor = list.NextCursor
	}
	return tools
}

// rawExchange is the state of captureToolsList's hand-written JSON-RPC client.
type rawExchange struct {
	t      *testing.T
	ctx    context.Context
	stdin  io.Writer
	lines  <-chan []byte
	stderr *syncBuffer
}

func (x *rawExchange) send(msg any) {
	x.t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		x.t.Fatalf("marshal: %v", err)
	}
	if _, err := x.stdin.Write(append(b, '\n')); err != nil {
		x.t.Fatalf("write to server: %v\nstderr:\n%s", err, x.stderr.String())
	}
}

// request sends a request and returns its result, answering server requests and ignoring
// notifications meanwhile. Bounded by the context and a message count.
func (x *rawExchange) request(id int, method string, params any) json.RawMessage {
	x.t.Helper()
	x.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	want := fmt.Sprint(id)
	const maxMessages = 1000
	for range maxMessages {
		var line []byte
		select {
		case l, ok := <-x.lines:
			if !ok {
				x.t.Fatalf("%s: server closed stdout\nstderr:\n%s", method, x.stderr.String())
			}
			line = l
		case <-x.ctx.Done():
			x.t.Fatalf("%s: %v\nstderr:\n%s", method, x.ctx.Err(), x.stderr.String())
		}
		var msg rawMessage
		if err := json.Unmarshal(line, &msg); err != nil {
			x.t.Fatalf("%s: undecodable line from server: %v: %.200q", method, err, line)
		}
		switch {
		case msg.Method != "" && len(msg.ID) > 0: // a request from the server
			reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
			if msg.Method == "roots/list" {
				reply["result"] = map[string]any{"roots": []any{}}
			} else {
				reply["error"] = map[string]any{"code": -32601, "message": "not supported by this test client"}
			}
			x.send(reply)
		case msg.Method != "": // a notification
		case string(msg.ID) == want:
			if len(msg.Error) > 0 {
				x.t.Fatalf("%s: error %s", method, msg.Error)
			}
			return msg.Result
		}
	}
	x.t.Fatalf("%s: no reply within %d messages", method, maxMessages)
	return nil
}

// sameSchema reports whether got (a bridge Tool.Parameters) equals want (the server's
// inputSchema bytes) byte for byte, allowing only the one documented fix: a zero-argument
// object schema without a "properties" key may gain "properties":{}.
func sameSchema(got, want json.RawMessage) bool {
	if bytes.Equal(got, want) {
		return true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(want, &m); err != nil {
		return false
	}
	if _, ok := m["properties"]; ok {
		return false
	}
	for _, fix := range []string{`,"properties":{}`, `"properties":{},`, `"properties":{}`} {
		if i := bytes.Index(got, []byte(fix)); i >= 0 {
			rest := append(append([]byte{}, got[:i]...), got[i+len(fix):]...)
			if bytes.Equal(rest, want) {
				return true
			}
		}
	}
	return false
}

func TestSameSchema(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
		same      bool
	}{
		{"identical", `{"type":"object","properties":{"a":{"type":"number"}}}`, `{"type":"object","properties":{"a":{"type":"number"}}}`, true},
		{"key order differs", `{"properties":{},"type":"object"}`, `{"type":"object","properties":{}}`, false},
		{"whitespace differs", `{"type": "object","properties":{}}`, `{"type":"object","properties":{}}`, false},
		{"zero-arg fix appended", `{"type":"object","properties":{}}`, `{"type":"object"}`, true},
		{"zero-arg fix first", `{"properties":{},"type":"object"}`, `{"type":"object"}`, true},
		{"fix with other keys", `{"type":"object","$schema":"x","properties":{}}`, `{"type":"object","$schema":"x"}`, true},
		{"fix where properties existed", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"a":{}}}`, false},
		{"non-empty properties added", `{"type":"object","properties":{"a":{}}}`, `{"type":"object"}`, false},
		{"number spelling", `{"type":"object","properties":{},"maximum":1}`, `{"type":"object","properties":{},"maximum":1.0}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSchema(json.RawMessage(tc.got), json.RawMessage(tc.want)); got != tc.same {
				t.Errorf("sameSchema(%s, %s) = %v, want %v", tc.got, tc.want, got, tc.same)
			}
		})
	}
}
