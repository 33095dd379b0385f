package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawEnv selects a misbehaving stdio server written directly against JSON-RPC (see
// runRawServer), for failures a well-behaved go-sdk server cannot produce.
const rawEnv = "MCPBRIDGE_TEST_RAW"

// Environment of the raw fixtures (all optional):
const (
	spawnLogEnv   = "MCPBRIDGE_TEST_SPAWNLOG"   // file: every start appends "<pid> <ppid>\n"
	eventLogEnv   = "MCPBRIDGE_TEST_EVENTLOG"   // file: notable things the server saw, one per line
	crashAfterEnv = "MCPBRIDGE_TEST_CRASHAFTER" // exit right after answering this many calls of "work"
)

// bigResultBytes is the text size of the "big" tool's result: over the 16 MiB stdio frame cap.
const bigResultBytes = 17 << 20

// runRawServer runs the raw fixture named mode over stdin/stdout. Modes:
//
//	basic          a plain JSON-RPC MCP server (see rawServer.call for its tools)
//	hang           never reads stdin or writes stdout (a server stuck at start)
//	exitdiscover   exits on server/discover
//	ignorediscover never answers server/discover
//	errordiscover  answers server/discover with a JSON-RPC error
//	stubborn       ignores SIGTERM and stdin EOF
//	lingering      ignores stdin EOF (SIGTERM still ends it)
//	crashloop      the first start works; later starts exit right after initialize
//	hangrestart    the first start works; later starts hang like "hang"
//	vanish         the first start lists the extra tool "vanish"; later starts do not
//	stderrflood    writes 2 MiB to stderr, then serves
//	stderrfail     writes 2 MiB to stderr and a last line, then exits 1
//	deepschema     also lists "deep", whose inputSchema nests deepSchemaLevels levels
//	sdk            a go-sdk server (see newChaosServer)
//
// Every start is appended to the spawn log first.
func runRawServer(mode string) int {
	spawn := recordSpawn()
	switch mode {
	case "sdk":
		srv := newChaosServer(logEvent)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
			return 1
		}
		return 0
	case "hang":
		hangForever()
	case "hangrestart":
		if spawn > 1 {
			hangForever()
		}
	case "stderrflood", "stderrfail":
		line := strings.Repeat("x", 1023) + "\n"
		w := bufio.NewWriterSize(os.Stderr, 64<<10)
		for range 2 << 10 { // 2 MiB
			_, _ = w.WriteString(line)
		}
		_ = w.Flush()
		if mode == "stderrfail" {
			fmt.Fprintln(os.Stderr, "FATAL: cannot open the database")
			return 1
		}
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
	}
	s := &rawServer{mode: mode, spawn: spawn, out: os.Stdout}
	if n, err := strconv.Atoi(os.Getenv(crashAfterEnv)); err == nil {
		s.crashAfter = n
	}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			s.handle(line)
		}
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "fixture: read:", err)
			}
			logEvent("stdin closed")
			if mode == "stubborn" || mode == "lingering" {
				hangForever()
			}
			return 0
		}
	}
}

// hangForever blocks until the process is killed. (A bare select{} would make the Go
// runtime report a deadlock.)
func hangForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// recordSpawn appends "<pid> <ppid>" to the spawn log and returns how many starts it holds.
func recordSpawn() int {
	name := os.Getenv(spawnLogEnv)
	if name == "" {
		return 1
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 1
	}
	_, _ = fmt.Fprintf(f, "%d %d\n", os.Getpid(), os.Getppid())
	_ = f.Close()
	b, _ := os.ReadFile(name)
	return bytes.Count(b, []byte("\n"))
}

// logEvent appends one line to the event log.
func logEvent(ev string) {
	name := os.Getenv(eventLogEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(ev + "\n")
	_ = f.Close()
}

// rawServer answers newline-delimited JSON-RPC one message at a time.
type rawServer struct {
	mode       string
	spawn      int
	out        io.Writer
	crashAfter int
	works      int
}

type rawMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (s *rawServer) handle(line []byte) {
	var m rawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintln(os.Stderr, "fixture: bad message:", err)
		return
	}
	if len(m.ID) == 0 { // a notification
		if m.Method == "notifications/cancelled" {
			logEvent("cancelled")
		}
		return
	}
	switch m.Method {
	case "server/discover":
		logEvent("discover")
		switch s.mode {
		case "exitdiscover":
			os.Exit(0)
		case "ignorediscover":
		default: // errordiscover, and what a legacy server does
			s.fail(m.ID, -32601, "method not found: server/discover")
		}
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.reply(m.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "raw-" + s.mode, "version": "0.0.1"},
		})
		if s.mode == "crashloop" && s.spawn > 1 {
			os.Exit(4)
		}
	case "tools/list":
		s.reply(m.ID, map[string]any{"tools": s.tools()})
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.call(m.ID, p.Name)
	case "ping":
		s.reply(m.ID, map[string]any{})
	default:
		s.fail(m.ID, -32601, "method not found: "+m.Method)
	}
}

func (s *rawServer) tools() []any {
	obj := map[string]any{"type": "object"}
	readOnly := map[string]any{"readOnlyHint": true}
	tools := []any{
		map[string]any{"name": "pid", "description": "Process ID.", "inputSchema": obj, "annotations": readOnly},
		map[string]any{"name": "work", "description": "Counts calls.", "inputSchema": obj},
		map[string]any{"name": "exit", "description": "Exits without answering.", "inputSchema": obj},
		map[string]any{"name": "big", "description": "A 17 MiB result.", "inputSchema": obj},
		map[string]any{"name": "hang", "description": "Never answers.", "inputSchema": obj},
	}
	if s.mode == "deepschema" {
		tools = append(tools, map[string]any{"name": "deep", "description": "A schema nested past decoders' depth limits.",
			"inputSchema": json.RawMessage(deepSchema(deepSchemaLevels))})
	}
	if s.mode == "video" {
		tools = append(tools, map[string]any{"name": "video", "description": "A result with content of unknown types.", "inputSchema": obj})
	}
	if s.mode == "vanish" && s.spawn == 1 {
		tools = append(tools, map[string]any{"name": "vanish", "description": "Gone after a restart.", "inputSchema": obj})
	}
	return tools
}

func (s *rawServer) call(id json.RawMessage, name string) {
	switch name {
	case "pid":
		s.text(id, strconv.Itoa(os.Getpid()))
	case "work":
		s.works++
		s.text(id, "work "+strconv.Itoa(s.works))
		if s.crashAfter > 0 && s.works >= s.crashAfter {
			os.Exit(5)
		}
	case "exit":
		os.Exit(3)
	case "big": // written by hand: json.Marshal of 17 MiB is slow under -race
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(id)
		b.WriteString(`,"result":{"content":[{"type":"text","text":"`)
		b.Write(bytes.Repeat([]byte("a"), bigResultBytes))
		b.WriteString("\"}]}}\n")
		_, _ = s.out.Write(b.Bytes())
	case "hang":
		logEvent("call hang")
	case "vanish":
		s.text(id, "still here")
	case "video":
		s.reply(id, json.RawMessage(unknownContentResult))
	default:
		s.fail(id, -32602, "unknown tool "+name)
	}
}

func (s *rawServer) text(id json.RawMessage, text string) {
	s.reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}

func (s *rawServer) reply(id json.RawMessage, result any) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (s *rawServer) fail(id json.RawMessage, code int, msg string) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func (s *rawServer) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fixture: marshal:", err)
		return
	}
	_, _ = s.out.Write(append(b, '\n'))
}

// newChaosServer is a go-sdk server whose tools report what happened to them through event:
// "sleep" logs "sleep started" and, when its context is cancelled, "sleep cancelled".
func newChaosServer(event func(string)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "chaos", Version: "0.0.1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "Process ID.", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	srv.AddTool(&mcp.Tool{Name: "sleep", Description: "Sleeps until cancelled.", InputSchema: obj},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			event("sleep started")
			select {
			case <-ctx.Done():
				event("sleep cancelled")
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return text("slept"), nil
			}
		})
	return srv
}

// deepSchemaLevels is past the nesting depth go-sdk's JSON decoder accepts.
const deepSchemaLevels = 1001

// deepSchema is an object schema whose properties nest n levels deep.
func deepSchema(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{}` + strings.Repeat(`}}`, n)
}
