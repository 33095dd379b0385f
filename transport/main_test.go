package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/transport"
)

// envMode makes the test binary act as a stdio MCP server (see TestMain).
const envMode = "MCPBRIDGE_TRANSPORT_TEST_MODE"

// bannerLines is how many non-protocol lines the "banner" server prints on
// stdout before serving.
const bannerLines = 20

// floodBytes is how much stderr the "flood" server writes before serving.
const floodBytes = 2 << 20

// schemas are the tools' input schemas: keys in odd order, $defs,
// additionalProperties, x- keys, a big integer that float64 cannot hold,
// and unicode.
var schemas = []string{
	`{"type":"object","properties":{"zeta":{"type":"integer","maximum":9007199254740993,"minimum":1.0,"x-custom":{"b":1,"a":[3,2,1]}},"alpha":{"$ref":"#/$defs/Pt"}},"$defs":{"Pt":{"type":"object","properties":{"y":{"type":"number"},"x":{"type":"number"}}}},"additionalProperties":false,"required":["zeta"],"x-vendor":"kept"}`,
	`{"type":"object"}`,
	`{"x-first":true,"type":"object","properties":{"s":{"type":"string","description":"héllo ✓","default":null}}}`,
}

// TestMain runs the tests, or, when envMode is set, acts as a child process.
func TestMain(m *testing.M) {
	mode := os.Getenv(envMode)
	if mode == "" {
		os.Exit(m.Run())
	}
	os.Exit(child(mode))
}

// child runs one child-process mode and returns the exit code.
func child(mode string) int {
	if mode != "silent1" {
		fmt.Fprintf(os.Stderr, "pid=%d\n", os.Getpid())
	}
	// A safety net: no child outlives a broken test for long.
	time.AfterFunc(2*time.Minute, func() { os.Exit(9) })
	switch mode {
	case "server":
	case "env":
		fmt.Fprintf(os.Stderr, "ADDED=%s PARENT=%s\n", os.Getenv("MCPB_ADDED"), os.Getenv("MCPB_PARENT"))
	case "flood":
		line := bytes.Repeat([]byte("x"), 1023)
		line = append(line, '\n')
		for n := 0; n < floodBytes; n += len(line) {
			if _, err := os.Stderr.Write(line); err != nil {
				return 2
			}
		}
		fmt.Fprintln(os.Stderr, "END-OF-FLOOD é")
	case "stubborn":
		// Ignore SIGTERM and stdin EOF; only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "ready")
		select {}
	case "daemonize":
		// A server that starts a daemon the classic way: fork, setsid, fork again, and the
		// middle process exits, so the daemon is in a session and process group of its own
		// and its parent is init.
		if err := startDetached("middle"); err != nil {
			fmt.Fprintln(os.Stderr, "daemonize:", err)
			return 2
		}
	case "middle":
		if err := startDetached("daemon"); err != nil {
			return 2
		}
		return 0
	case "daemon":
		if err := os.WriteFile(os.Getenv("MCPB_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return 2
		}
		for {
			time.Sleep(time.Hour) // until killed (or the safety net above)
		}
	case "exit3":
		return 3
	case "silent1":
		return 1 // nothing on stdout or stderr
	case "dies":
		fmt.Fprintln(os.Stderr, "starting")
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set\x1b[0m")
		return 1
	case "banner":
		// A server with a logger left on stdout: lines that are not
		// JSON-RPC before (and between) its messages.
		for i := range bannerLines - 3 {
			fmt.Fprintf(os.Stdout, "Starting server… step %d\x1b[31m\n", i)
		}
		fmt.Fprintln(os.Stdout, `{"level":"info","msg":"JSON, but not JSON-RPC"}`)
		fmt.Fprintln(os.Stdout, "")
		fmt.Fprintln(os.Stdout, strings.Repeat("long banner line ", 64<<10)) // 1 MiB, one line
		fmt.Fprintln(os.Stdout, "")
	case "video":
		return rawVideoServer()
	case "notifier":
		return notifierServer()
	case "holding", "hung":
		// A server whose transport holds each answer until it reads its next line
		// ("holding"), or, once initialized, never writes one ("hung").
		if err := newServer().Run(context.Background(), &holdingTransport{hung: mode == "hung"}); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
		}
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 2
	}
	if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
	}
	return 0
}

// newServer returns a go-sdk server with one tool per schema, listed one per
// page so that a full listing takes several tools/list calls.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "transport-test", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	for i, sc := range schemas {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: "tool", InputSchema: json.RawMessage(sc)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	return s
}

// stdioSpec returns a Spec that runs this test binary in the given mode.
func stdioSpec(t *testing.T, id, mode string) transport.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: a -race child otherwise sleeps 1s at exit.
	return transport.Spec{ID: id, Command: exe, Env: map[string]string{envMode: mode, "GORACE": "atexit_sleep_ms=0"}}
}

// session connects a client over c with the bridge's pinned protocol version.
// The session and c are closed at cleanup.
func session(t *testing.T, ctx context.Context, c *transport.Conn) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "transport-test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		c.Close()
		t.Fatalf("connect: %v (stderr: %q)", err, c.Stderr())
	}
	t.Cleanup(func() {
		cs.Close()
		c.Close()
	})
	return cs
}

// listAll lists every page of tools and returns their names.
func listAll(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// checkRawTools asserts that raw holds the test tools with their input
// schemas exactly as sent (the server compacts them).
func checkRawTools(t *testing.T, raw []json.RawMessage) {
	t.Helper()
	if len(raw) != len(schemas) {
		t.Fatalf("TakeTools returned %d tools, want %d: %s", len(raw), len(schemas), raw)
	}
	for i, r := range raw {
		var tool struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(r, &tool); err != nil {
			t.Fatalf("tool %d: %v", i, err)
		}
		if want := fmt.Sprintf("t%d", i); tool.Name != want {
			t.Errorf("tool %d name = %q, want %q", i, tool.Name, want)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(schemas[i])); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tool.InputSchema, want.Bytes()) {
			t.Errorf("tool %d inputSchema:\n got %s\nwant %s", i, tool.InputSchema, want.Bytes())
		}
	}
}

// testCtx returns a context with a generous deadline for a loaded machine.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
