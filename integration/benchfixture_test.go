package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// Fixtures of the benchmarks and the load test: go-sdk servers in this process (reached
// through in-memory transports), as a stdio process (testdata/benchserver, built with
// `go build`, because the package has no TestMain to re-exec into) and over Streamable HTTP
// (httptest). Raw go-sdk client sessions to the same servers are the baselines.

// benchAddSchema is the inputSchema of the "add" tool; testdata/benchserver serves the same.
const benchAddSchema = `{"type":"object","properties":{"a":{"type":"number","description":"first addend"},"b":{"type":"number","description":"second addend"}},"required":["a","b"],"additionalProperties":false}`

// benchAddArgs are the arguments every add call sends; the sum is benchAddSum.
const (
	benchAddArgs = `{"a":40,"b":2}`
	benchAddSum  = "42"
)

// The protocol versions the benchmarks compare: the default (negotiated: 2026-07-28 with
// go-sdk servers, through server/discover) and the pinned legacy version (initialize).
// Every comparison speaks one version on both sides.
const (
	benchDefault = ""           // negotiate, as the bridge and go-sdk do by default
	benchLegacy  = "2025-11-25" // pinned
)

// benchAdd is the "add" tool: the sum of a and b as text.
func benchAdd(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct{ A, B float64 }
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad arguments: " + err.Error()}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'g', -1, 64)}}}, nil
}

// benchSize answers with the size of its arguments, without looking inside: the server
// side of the argument-validation benchmark.
func benchSize(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(len(req.Params.Arguments)) + " bytes"}}}, nil
}

// newBenchServer returns a go-sdk server offering "add" and extra tools "tool_000"... with
// realistic schemas (about 1.5 KB each).
func newBenchServer(extra int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
	})
	srv.AddTool(&mcp.Tool{Name: "add", Description: "Adds two numbers.", InputSchema: json.RawMessage(benchAddSchema)}, benchAdd)
	for i := range extra {
		name := fmt.Sprintf("tool_%03d", i)
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Description: "Searches the " + name + " index for records matching a query, with paging, filters and sorting. Returns matching records as JSON.",
			InputSchema: realisticSchema(i),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}, benchAdd)
	}
	return srv
}

// realisticSchema is an inputSchema the size and shape of a typical real tool's: a handful
// of described properties, enums, bounds, a nested object and an array (about 1.5 KB).
func realisticSchema(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"query":{"type":"string","description":"Full-text query for index %d; supports quoted phrases and -exclusions.","minLength":1,"maxLength":512},`+
		`"limit":{"type":"integer","description":"Maximum number of records to return.","minimum":1,"maximum":100,"default":20},`+
		`"cursor":{"type":"string","description":"Opaque cursor from a previous page; omit for the first page."},`+
		`"sort":{"type":"string","enum":["relevance","created","updated","name"],"description":"Sort order of the records.","default":"relevance"},`+
		`"order":{"type":"string","enum":["asc","desc"],"default":"desc"},`+
		`"filters":{"type":"object","description":"Restricts the records returned.","properties":{`+
		`"status":{"type":"array","items":{"type":"string","enum":["open","closed","archived","draft"]},"uniqueItems":true},`+
		`"owner":{"type":"string","description":"User name or e-mail of the owner.","pattern":"^[A-Za-z0-9._%%+@-]+$"},`+
		`"createdAfter":{"type":"string","format":"date-time","description":"Only records created after this instant (RFC 3339)."},`+
		`"createdBefore":{"type":"string","format":"date-time"},`+
		`"labels":{"type":"array","items":{"type":"string","maxLength":64},"maxItems":20}},`+
		`"additionalProperties":false},`+
		`"fields":{"type":"array","description":"Fields to include in each record; all when omitted.","items":{"type":"string","enum":["id","name","status","owner","created","updated","labels","body"]}},`+
		`"includeArchived":{"type":"boolean","description":"Also search archived records.","default":false}},`+
		`"required":["query"],"additionalProperties":false}`, i))
}

// benchLargeSchema is the large inputSchema of the validation benchmark: an array of
// records defined in $defs (each checked for types, bounds, a pattern, enums and
// additionalProperties) plus 300 optional top-level properties.
func benchLargeSchema() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"record":{"type":"object","properties":{` +
		`"id":{"type":"integer","minimum":0},` +
		`"name":{"type":"string","minLength":1,"maxLength":200,"pattern":"^[a-z0-9 ]+$"},` +
		`"score":{"type":"number","minimum":0,"maximum":100},` +
		`"tags":{"type":"array","items":{"type":"string","enum":["red","green","blue","cyan","magenta","yellow"]},"maxItems":16},` +
		`"owner":{"type":"object","properties":{"login":{"type":"string"},"admin":{"type":"boolean"}},"required":["login"],"additionalProperties":false}},` +
		`"required":["id","name","score"],"additionalProperties":false}},` +
		`"properties":{"records":{"type":"array","items":{"$ref":"#/$defs/record"}}`)
	for i := range 300 {
		fmt.Fprintf(&b, `,"opt_%03d":{"type":"string","maxLength":64,"description":"Optional setting number %d of the large schema."}`, i, i)
	}
	b.WriteString(`},"required":["records"],"additionalProperties":false}`)
	return json.RawMessage(b.String())
}

// benchLargeArgs returns arguments of about size bytes that are valid against
// benchLargeSchema.
func benchLargeArgs(size int) json.RawMessage {
	var b strings.Builder
	b.Grow(size + 256)
	b.WriteString(`{"opt_000":"x","records":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"record number %d","score":%d.5,"tags":["red","blue","cyan"],"owner":{"login":"user%d","admin":false}}`, i, i, i%100, i%97)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// newLargeSchemaServer serves "bulk" (benchLargeSchema, answered by benchSize).
func newLargeSchemaServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bulk", Version: "1"}, &mcp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
	})
	srv.AddTool(&mcp.Tool{Name: "bulk", Description: "Stores records.", InputSchema: benchLargeSchema()}, benchSize)
	return srv
}

// benchInProcess is the config of an in-process server: every (re)dial connects srv to a
// fresh pair of in-memory transports. startDelay models a slow start (spent in the
// factory, as a slow process start would be).
func benchInProcess(id string, srv *mcp.Server, startDelay time.Duration) bridge.ServerConfig {
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		if startDelay > 0 {
			time.Sleep(startDelay)
		}
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

// benchStdio is the config of a stdio server running the benchserver binary bin.
func benchStdio(id, bin string, args ...string) bridge.ServerConfig {
	return bridge.ServerConfig{ID: id, Type: bridge.TypeStdio, Command: bin, Args: args}
}

// benchOptions are bridge Options that log nothing.
func benchOptions() *bridge.Options {
	return &bridge.Options{Logger: slog.New(slog.DiscardHandler)}
}

// newRawClient returns a go-sdk client configured like the bridge's (no advertised
// capabilities besides what the bridge sends does not change the call path).
func newRawClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{
		Logger:       slog.New(slog.DiscardHandler),
		Capabilities: &mcp.ClientCapabilities{},
	})
}

// rawInMemory connects a raw go-sdk client session to srv over in-memory transports,
// offering protocol ("" negotiates). The caller closes it.
func rawInMemory(ctx context.Context, srv *mcp.Server, protocol string) (*mcp.ClientSession, error) {
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		return nil, fmt.Errorf("server connect: %w", err)
	}
	return newRawClient().Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
}

// rawStdio starts bin with mcp.CommandTransport and connects a raw go-sdk client session to
// it, offering protocol ("" negotiates). The caller closes it (which ends the process).
func rawStdio(ctx context.Context, bin, protocol string, args ...string) (*mcp.ClientSession, error) {
	cmd := exec.Command(bin, args...)
	return newRawClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
}

// buildBenchServer builds testdata/benchserver into a temporary directory and returns the
// binary's absolute path. It skips when no go command is available (fails under CI=true).
func buildBenchServer(tb testing.TB) string {
	tb.Helper()
	return goBuild(tb, "benchserver")
}

// goBuild builds the program testdata/<name> into a temporary directory and returns the
// binary's absolute path. It skips when no go command is available (fails under CI=true).
func goBuild(tb testing.TB, name string) string {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("no go command to build testdata/%s: %v", name, err)
		}
		tb.Skipf("no go command to build testdata/%s: %v", name, err)
	}
	out := filepath.Join(tb.TempDir(), name)
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	if msg, err := exec.Command(goBin, "build", "-o", out, "./testdata/"+name).CombinedOutput(); err != nil {
		tb.Fatalf("go build ./testdata/%s: %v\n%s", name, err, msg)
	}
	return out
}

// benchHTTP serves srv over Streamable HTTP on a loopback httptest server and returns the
// endpoint URL. The server is closed at cleanup. go-sdk's handler is stateful by default,
// which speaks protocols up to 2025-11-25; a stateless one speaks 2026-07-28.
func benchHTTP(tb testing.TB, srv *mcp.Server, stateless bool) string {
	tb.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Logger:    slog.New(slog.DiscardHandler),
		Stateless: stateless,
	})
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// benchHTTPProcess runs bin (testdata/benchserver) as a Streamable HTTP server in a process
// of its own, as a remote server would be, and returns its endpoint URL; stateless selects
// go-sdk's stateless handler. The process ends at cleanup.
func benchHTTPProcess(tb testing.TB, bin string, stateless bool) string {
	tb.Helper()
	args := []string{"-http"}
	if stateless {
		args = append(args, "-stateless")
	}
	cmd := exec.Command(bin, args...)
	_, stdout := startPiped(tb, cmd)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("benchserver -http: %v", err)
	}
	return strings.TrimSpace(line)
}

// benchTool returns the tool of server id whose remote name is remote.
func benchTool(tb testing.TB, tools bridge.Tools, id, remote string) bridge.Tool {
	tb.Helper()
	for _, t := range tools {
		if t.RemoteName == remote && t.Server != nil && t.Server.ID() == id {
			return t
		}
	}
	tb.Fatalf("no tool %q of server %q among %d tools", remote, id, len(tools))
	return bridge.Tool{}
}

// callTool is one call of the benchmarked kind (a Handler or a raw CallTool).
type callTool func(ctx context.Context) error

// handlerCall calls h with benchAddArgs and checks the sum.
func handlerCall(h func(context.Context, json.RawMessage) (string, error)) callTool {
	args := json.RawMessage(benchAddArgs)
	return func(ctx context.Context) error {
		out, err := h(ctx, args)
		if err != nil {
			return err
		}
		if out != benchAddSum {
			return fmt.Errorf("add = %q, want %s", out, benchAddSum)
		}
		return nil
	}
}

// rawCall calls add on cs with benchAddArgs and checks the sum, as a go-sdk user would:
// fresh params (CallTool mutates them) and the text of the first content block.
func rawCall(cs *mcp.ClientSession) callTool {
	return func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(benchAddArgs)})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) != 1 {
			return fmt.Errorf("add: unexpected result %+v", res)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != benchAddSum {
			return fmt.Errorf("add: unexpected content %+v", res.Content[0])
		}
		return nil
	}
}

// runConcurrent makes n calls of call from conc goroutines and returns the first error.
func runConcurrent(ctx context.Context, n, conc int, call callTool) error {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := call(ctx); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// startPiped starts cmd with pipes on its stdin and stdout and its stderr on ours; when the
// test ends it closes stdin (which ends the program) and waits for it, killing it after 10 s.
func startPiped(tb testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return stdin, stdout
}
