package transport_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/transport"
)

// holdingTransport is go-sdk's stdio transport with the stall of issue 36 made certain:
// every answer after initialize's is held until the server reads its next line (then it
// is written), as go-sdk stdio servers now and then do. With hung set, those answers are
// never written at all. Each ping the server reads is noted on stderr.
type holdingTransport struct{ hung bool }

// Connect implements mcp.Transport.
func (t *holdingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := (&mcp.StdioTransport{}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &holdingConn{Connection: c, hung: t.hung}, nil
}

type holdingConn struct {
	mcp.Connection
	hung bool

	mu      sync.Mutex
	held    []jsonrpc.Message
	answers int
}

func (c *holdingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "ping" {
		fmt.Fprintf(os.Stderr, "ping %v\n", r.ID.Raw())
	}
	c.mu.Lock()
	held := c.held
	c.held = nil
	c.mu.Unlock()
	for _, h := range held { // released by the line just read
		if werr := c.Connection.Write(ctx, h); werr != nil {
			return nil, werr
		}
	}
	return m, err
}

func (c *holdingConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if _, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.answers++
		switch {
		case c.answers == 1: // initialize's
		case c.hung:
			return nil // never written
		default:
			c.held = append(c.held, m)
			return nil
		}
	}
	return c.Connection.Write(ctx, m)
}

// TestNudgeReleasesHeldAnswer: against a go-sdk server that holds each answer until it
// reads another line, a call (go-sdk's session and the direct client alike) returns with
// its result long before its 15 s timeout, because the connection pings the quiet server;
// with nudging off the same call stalls until its timeout. The pings' answers never reach
// a caller: every result is the tool's own.
func TestNudgeReleasesHeldAnswer(t *testing.T) {
	const callTimeout = 15 * time.Second
	tests := []struct {
		name   string
		after  time.Duration // Spec.NudgeAfter
		direct bool
		calls  int
	}{
		{"default bound, go-sdk session", 0, false, 1},
		{"default bound, direct call", 0, true, 1},
		{"short bound, go-sdk session", 50 * time.Millisecond, false, 5},
		{"short bound, direct call", 50 * time.Millisecond, true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := stdioSpec(t, "holding", "holding")
			spec.NudgeAfter = tt.after
			c, err := transport.Open(spec, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, testCtx(t), c)
			for i := range tt.calls {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				start := time.Now()
				res, err := callTool(ctx, c, cs, tt.direct)
				took := time.Since(start)
				cancel()
				if err != nil {
					t.Fatalf("call %d: %v (stderr: %q)", i, err, c.Stderr())
				}
				if got := resultText(res); got != "ok" {
					t.Fatalf("call %d result = %q, want the tool's %q", i, got, "ok")
				}
				// Not a timing equality: only that the stall did not run to the timeout.
				if took >= callTimeout/2 {
					t.Errorf("call %d took %v, want well under the %v call timeout", i, took, callTimeout)
				}
			}
			// The server notes each ping on stderr, which is read on its own goroutine.
			waitFor(t, "the server to note our ping", 10*time.Second, func() bool {
				return strings.Contains(c.Stderr(), "ping mcpbridge-nudge-")
			})
		})
	}
}

// TestNudgeOffStalls: the fixture really stalls: with nudging off, a call waits for the
// held answer until its timeout, on both paths.
func TestNudgeOffStalls(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			spec := stdioSpec(t, "holding-off", "holding")
			spec.NudgeAfter = -1
			c, err := transport.Open(spec, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, testCtx(t), c)
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			if _, err := callTool(ctx, c, cs, direct); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call with nudging off = %v, want the deadline error (the held answer)", err)
			}
			if strings.Contains(c.Stderr(), "ping ") {
				t.Errorf("nudging off, yet the server saw a ping; stderr: %q", c.Stderr())
			}
		})
	}
}

// TestNudgeHungServer: a server that reads everything and answers nothing after
// initialize is pinged a few times at most, and the call ends at its timeout.
func TestNudgeHungServer(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			spec := stdioSpec(t, "hung", "hung")
			spec.NudgeAfter = 20 * time.Millisecond
			c, err := transport.Open(spec, transport.KindStdio)
			if err != nil {
				t.Fatal(err)
			}
			cs := session(t, testCtx(t), c)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err = callTool(ctx, c, cs, direct)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call on a hung server = %v, want the deadline error", err)
			}
			// 50 nudge intervals passed; the pings stay few (maxUnansweredNudges).
			waitFor(t, "a ping", 5*time.Second, func() bool { return strings.Contains(c.Stderr(), "ping ") })
			if n := strings.Count(c.Stderr(), "ping mcpbridge-nudge-"); n > 4 {
				t.Errorf("a hung server got %d pings, want at most 4", n)
			}
		})
	}
}

func callTool(ctx context.Context, c *transport.Conn, cs *mcp.ClientSession, direct bool) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}
	if direct {
		return c.Direct().CallTool(ctx, p, &wire.CallOptions{Protocol: "2025-11-25"})
	}
	return cs.CallTool(ctx, p)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// BenchmarkNudgeOverhead: sequential direct calls to a go-sdk stdio server with nudging on
// (the default) and off: the bookkeeping of each request and answer.
func BenchmarkNudgeOverhead(b *testing.B) {
	for _, tt := range []struct {
		name  string
		after time.Duration
	}{{"on", 0}, {"off", -1}} {
		b.Run(tt.name, func(b *testing.B) {
			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			spec := transport.Spec{ID: "bench", Command: exe, Env: map[string]string{envMode: "server", "GORACE": "atexit_sleep_ms=0"}, NudgeAfter: tt.after}
			c, err := transport.Open(spec, transport.KindStdio)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolParams{Name: "t1", Arguments: map[string]any{}}
			opts := &wire.CallOptions{Protocol: "2025-11-25"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Direct().CallTool(ctx, p, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
