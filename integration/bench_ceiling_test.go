package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// The ceiling client of BenchmarkVsSDKs: a minimal hand-written JSON-RPC client over the
// pipes of testdata/benchserver, with no SDK. It does only what the protocol requires of
// a client that calls one tool, so the rate it reaches is the server's own ceiling: on
// protocol 2026-07-28 every tools/call carries the per-request _meta envelope (no
// handshake), on 2025-11-25 it sends initialize and notifications/initialized once. One
// reader goroutine per server matches responses to callers by ID; writes are one write
// call per request. Results are checked by their bytes.

// ceilingEnvelope is the _meta of a 2026-07-28 request from this client: protocol
// version, client info, no capabilities.
const ceilingEnvelope = `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ceiling","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// bridgeEnvelope is the _meta the bridge sends on a call of the benchmarks' "add" with its
// default options (TestBridgeEnvelope checks it against what the bridge sends): a tool
// without a UI on a server without tasks, so neither the MCP Apps nor the tasks extension
// is declared on the call (bridge/callpath.go), only the client info differs from the
// ceiling's. The server decodes the capabilities of every 2026-07-28 request, so the
// "ceiling-env" client, which sends these bytes, shows what the server's ceiling is for
// the bridge's requests.
func bridgeEnvelope() string {
	return `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpbridge","version":"devel"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
}

// ceilingConn is one server process and its pending calls.
type ceilingConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	params []byte // the params of every tools/call

	wmu sync.Mutex
	buf []byte

	mu      sync.Mutex
	next    int64
	pending map[int64]chan []byte
	err     error
	done    chan struct{}
}

// startCeiling starts bin and, for the 2025-11-25 protocol, does the handshake. On
// 2026-07-28, envelope is the _meta of every call.
func startCeiling(ctx context.Context, bin, protocol, envelope string) (*ceilingConn, error) {
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &ceilingConn{cmd: cmd, stdin: stdin, pending: map[int64]chan []byte{}, done: make(chan struct{})}
	c.params = []byte(`{"name":"add","arguments":{"a":40,"b":2}}`)
	if protocol >= "2026-07-28" {
		c.params = []byte(`{"_meta":` + envelope + `,"name":"add","arguments":{"a":40,"b":2}}`)
	}
	go c.read(stdout)
	if protocol < "2026-07-28" {
		init := []byte(`{"protocolVersion":"` + protocol + `","capabilities":{},"clientInfo":{"name":"ceiling","version":"1"}}`)
		if _, err := c.call(ctx, "initialize", init); err != nil {
			c.close()
			return nil, fmt.Errorf("initialize: %w", err)
		}
		if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// read hands each response line to the caller waiting for its ID.
func (c *ceilingConn) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		id, ok := responseID(line)
		if !ok {
			continue // a notification or a request from the server: nothing this client asked
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- bytes.Clone(line)
		}
	}
	c.mu.Lock()
	c.err = errors.New("server closed its stdout")
	if err := sc.Err(); err != nil {
		c.err = err
	}
	c.mu.Unlock()
	close(c.done)
}

// responseID returns the integer "id" of a response line written by go-sdk
// ({"jsonrpc":"2.0","id":N,"result":…}).
func responseID(line []byte) (int64, bool) {
	const key = `"id":`
	i := bytes.Index(line, []byte(key))
	if i < 0 || bytes.Contains(line[:i], []byte(`"method"`)) {
		return 0, false
	}
	j := i + len(key)
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	n, err := strconv.ParseInt(string(line[j:k]), 10, 64)
	return n, err == nil
}

func (c *ceilingConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(b)
	return err
}

// call sends one request and returns its response line.
func (c *ceilingConn) call(ctx context.Context, method string, params []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	c.buf = strconv.AppendInt(c.buf, id, 10)
	c.buf = append(c.buf, `,"method":"`...)
	c.buf = append(c.buf, method...)
	c.buf = append(c.buf, `","params":`...)
	c.buf = append(c.buf, params...)
	c.buf = append(c.buf, "}\n"...)
	_, err := c.stdin.Write(c.buf)
	c.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case line := <-ch:
		return line, nil
	case <-c.done:
		return nil, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// add calls "add" and checks the answer.
func (c *ceilingConn) add(ctx context.Context) error {
	line, err := c.call(ctx, "tools/call", c.params)
	if err != nil {
		return err
	}
	if !bytes.Contains(line, []byte(`"result":`)) || !bytes.Contains(line, []byte(`"text":"`+benchAddSum+`"`)) {
		return fmt.Errorf("add: unexpected response %s", line)
	}
	return nil
}

func (c *ceilingConn) close() {
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// ceilingClient connects sdkServers servers with the ceiling client on protocol, sending
// envelope as the _meta of every 2026-07-28 call.
func ceilingClient(ctx context.Context, b *testing.B, bin, name, protocol, envelope string) sdkClient {
	conns := make([]*ceilingConn, sdkServers)
	for i := range conns {
		c, err := startCeiling(ctx, bin, protocol, envelope)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.close)
		conns[i] = c
	}
	return sdkClient{name: name, run: func(ctx context.Context, n, width int) (time.Duration, error) {
		return roundRobin(ctx, n, width, len(conns), func(ctx context.Context, i int) error { return conns[i].add(ctx) })
	}}
}

// TestBridgeEnvelope: the bytes the ceiling-env client sends are the _meta of the bridge's
// own tools/call with default options (decoded and compared as values), so the
// benchmark's "same request bytes" row stays true when the bridge's capabilities change.
func TestBridgeEnvelope(t *testing.T) {
	srv := newBenchServer(0)
	metas := make(chan map[string]any, 4)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				metas <- req.GetParams().GetMeta()
			}
			return next(ctx, method, req)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := bridge.Dial(ctx, benchInProcess("env", srv, 0), benchOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, "add", json.RawMessage(benchAddArgs)); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(<-metas)
	var want any
	if err := json.Unmarshal([]byte(bridgeEnvelope()), &want); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("the bridge's tools/call _meta is\n %s\nthe benchmark's ceiling-env sends\n %s", got, wantJSON)
	}
}
