package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// serverEnv makes the test binary an MCP server: its value names the kind (see serveStdio).
const serverEnv = "MCPBRIDGE_CLI_TEST_SERVER"

// pidFileEnv names the file the "hang" server writes its pid to.
const pidFileEnv = "MCPBRIDGE_CLI_TEST_PIDFILE"

func TestMain(m *testing.M) {
	if kind := os.Getenv(serverEnv); kind != "" {
		os.Exit(serveStdio(kind))
	}
	flag.Parse()
	os.Exit(m.Run())
}

// serveStdio runs a test server on stdin/stdout: "basic" (tools with every feature probe
// reports on), "mini" (one tool that clashes with basic's; prints two lines that are not
// JSON-RPC on stdout first), "crash" (writes to stderr and exits before the handshake),
// "echoargs" (prints its arguments and exits), "hang" (never answers), "printtoken" (a
// token command: prints a workload token).
func serveStdio(kind string) int {
	switch kind {
	case "basic", "mini":
		if kind == "mini" { // a logger left on stdout: lines that are not JSON-RPC
			fmt.Println("mini: starting server on stdio…")
			fmt.Println("mini: ready")
		}
		if err := newTestServer(kind).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "hang": // never answers; writes its pid where MCPBRIDGE_CLI_TEST_PIDFILE says
		if err := os.WriteFile(os.Getenv(pidFileEnv), []byte(fmt.Sprint(os.Getpid())), 0o600); err != nil {
			return 1
		}
		_, _ = io.Copy(io.Discard, os.Stdin) // until the client closes stdin
		return 0
	case "printtoken": // a token command: prints MCPBRIDGE_CLI_TEST_TOKEN when told the audience
		if os.Getenv("MCPBRIDGE_AUDIENCE") == "" {
			fmt.Fprintln(os.Stderr, "printtoken: MCPBRIDGE_AUDIENCE is not set")
			return 4
		}
		fmt.Println(os.Getenv(tokenEnv))
		return 0
	case "echoenv": // prints its arguments and environment to stderr, then serves "basic"
		fmt.Fprintln(os.Stderr, "the env server: args", os.Args[1:], "token", os.Getenv("API_TOKEN"), "config", os.Getenv("SERVICE_CONFIG"))
		s := newTestServer("basic")
		s.AddTool(&mcp.Tool{Name: "env", Description: "Shows its environment.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("token " + os.Getenv("API_TOKEN") + " config " + os.Getenv("SERVICE_CONFIG")), nil
			})
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "echoargs": // prints its arguments and API_TOKEN to stderr, then fails like crash
		fmt.Fprintln(os.Stderr, "the args server started with", os.Args[1:], "token", os.Getenv("API_TOKEN"))
		return 3
	case "skills", "skills-tampered": // skills_test.go: internal/skillstest's server
		return serveSkills(kind)
	case "tasks": // a tool that runs as an MCP task (tasks_test.go)
		return serveTasks()
	case "crash":
		for i := 1; i <= 14; i++ {
			fmt.Fprintf(os.Stderr, "crash: log line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "crash: fatal: cannot start")
		return 3
	case "npm404": // what npx writes for a package that does not exist (captured from npm 11)
		b, err := os.ReadFile(filepath.Join("..", "..", "transport", "testdata", "npm", "e404.txt"))
		if err != nil {
			return 4
		}
		_, _ = os.Stderr.Write(b)
		return 1
	}
	fmt.Fprintf(os.Stderr, "unknown test server kind %q\n", kind)
	return 1
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func newTestServer(kind string) *mcp.Server {
	var opts *mcp.ServerOptions
	if kind == "basic" { // instructions with a terminal escape and more lines than probe shows
		opts = &mcp.ServerOptions{Instructions: "Call echo to repeat text.\x1b[2J\nUse pick for choices.\n3\n4\n5\n6\n7\n" + strings.Repeat("long ", 30)}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "cli-test-" + kind, Version: "1.2.3"}, opts)
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return textResult(kind + " says: " + a.Text), nil
	}
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echo the text back.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to say"}},"required":["text"]}`),
	}, echo)
	if kind == "mini" {
		return s
	}
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("done"), nil
	}
	s.AddTool(&mcp.Tool{
		Name:        "do.thing",
		Description: "A tool with a dotted name and no arguments.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, ok)
	s.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Always reports a tool error.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := textResult("boom: the widget is broken")
		r.IsError = true
		return r, nil
	})
	s.AddTool(&mcp.Tool{
		Name:        "pick",
		Description: "Either a or b.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`),
	}, ok)
	s.AddTool(&mcp.Tool{
		Name:        "remote_ref",
		Description: "Its schema points at a URL.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://schemas.example.com/x.json"}}}`),
	}, ok)
	s.AddTool(&mcp.Tool{
		Name:        "show_chart",
		Description: "Shows a chart.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"series":{"type":"array","items":{"type":"number"}}}}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": "ui://test/chart.html"}},
	}, ok)
	s.AddTool(&mcp.Tool{
		Name:        "chart_data",
		Description: "Data for the chart App only.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Meta:        mcp.Meta{"ui": map[string]any{"resourceUri": "ui://test/chart.html", "visibility": []string{"app"}}},
	}, ok)
	return s
}

// testToken is the secret an HTTP test server wants; it must never be printed.
const testToken = "s3cret-token-do-not-print"

// startHTTPServer serves the "mini" test server over Streamable HTTP at /mcp, requiring
// "Authorization: Bearer <testToken>".
func startHTTPServer(t *testing.T) string {
	t.Helper()
	srv := newTestServer("mini")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
