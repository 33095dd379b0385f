package bridge_test

// The timing contracts of start-up and calls, with in-process servers in testing/synctest
// bubbles: time is fake, so each bound is exact and a loaded machine cannot fail it. The
// chaos tests check the same contracts against real processes (within slack.Limit) and
// what only processes show (teardown, signals).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge"
)

// mute is an in-process server that reads every message and never answers, as a server
// stuck at start does; close ends its side of the pipe.
func mute(id string) (cfg bridge.ServerConfig, close func()) {
	var conns []mcp.Connection
	cfg = bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		conn, err := st.Connect(context.Background())
		if err != nil {
			return nil, err
		}
		conns = append(conns, conn)
		go func() {
			for {
				if _, err := conn.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		return ct, nil
	}}
	return cfg, func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// hanging is an in-process go-sdk server with one tool, "hang", that returns only when its
// request is cancelled (counted in cancelled).
func hanging(cancelled *atomic.Int32) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hanging", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	return srv
}

// A server that never answers initialize is given up after exactly its ConnectTimeout, and
// Connect returns then with the healthy server's tools; a caller's earlier ctx deadline
// wins over the ConnectTimeout.
func TestHangAtStartCostsItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang, closeHang := mute("hang")
		defer closeHang()
		hang.ConnectTimeout = time.Second
		var gaveUp time.Duration
		start := time.Now()
		opts := quietOpts()
		opts.OnStatus = func(_ context.Context, st bridge.ServerStatus) {
			if st.ID == "hang" {
				gaveUp = time.Since(start)
			}
		}
		var cancelled atomic.Int32
		set, err := bridge.Connect(t.Context(), []bridge.ServerConfig{hang, inMemory("ok", hanging(&cancelled), nil, nil)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer set.Close()
		if d := time.Since(start); gaveUp != time.Second || d != time.Second {
			t.Errorf("the hanging server was given up after %s and Connect returned after %s; want exactly 1s (its ConnectTimeout)", gaveUp, d)
		}
		if f := set.Failed(); len(f) != 1 || f[0].Phase != bridge.PhaseInitialize || !errors.Is(f[0], context.DeadlineExceeded) {
			t.Errorf("Failed() = %v, want the hanging server's timeout in initialize", f)
		}
		if got := names(set.Tools()); len(got) != 1 || got[0] != "hang" {
			t.Errorf("tools = %v, want the healthy server's", got)
		}

		hang.ConnectTimeout = time.Minute
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = bridge.Dial(ctx, hang, quietOpts())
		if d := time.Since(start); d != 500*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Dial with a 500ms ctx deadline: %v after %s; want the deadline after exactly 500ms", err, d)
		}
	})
}

// A call that ends at a deadline says whose it was: "no answer within" the call timeout
// when that ended it, the caller's context when its earlier deadline did.
func TestCallDeadlineSaysWhose(t *testing.T) {
	for _, tc := range []struct {
		name          string
		callTimeout   time.Duration
		callerTimeout time.Duration
		want          string
	}{
		{"the call timeout", 300 * time.Millisecond, time.Minute, "no answer within 300ms"},
		{"the caller's deadline", time.Minute, 300 * time.Millisecond, "the caller's context ended before an answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var cancelled atomic.Int32
				opts := quietOpts()
				opts.CallTimeout = tc.callTimeout
				s, err := bridge.Dial(t.Context(), inMemory("slow", hanging(&cancelled), nil, nil), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx, cancel := context.WithTimeout(t.Context(), tc.callerTimeout)
				defer cancel()
				start := time.Now()
				_, err = s.CallTool(ctx, "hang", nil)
				if d := time.Since(start); d != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("call: %v after %s; want DeadlineExceeded after exactly 300ms, saying %q", err, d, tc.want)
				}
			})
		})
	}
}

// Options.CallTimeout ends a call whose ctx has no deadline after exactly that long, the
// server sees the cancellation, and the session stays usable; cancelling a call's ctx
// returns it at once; Close returns at once with a call in flight, which fails "server
// closed".
func TestCallTimeoutCancelAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cancelled atomic.Int32
		opts := quietOpts()
		opts.CallTimeout = 300 * time.Millisecond
		s, err := bridge.Dial(t.Context(), inMemory("slow", hanging(&cancelled), nil, nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = s.CallTool(context.Background(), "hang", nil)
		if d := time.Since(start); d != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `"hang"`) {
			t.Errorf("call with a 300ms CallTimeout: %v after %s; want the deadline after exactly 300ms, naming the tool", err, d)
		}
		synctest.Wait()
		if n := cancelled.Load(); n != 1 {
			t.Errorf("the server saw %d cancellations, want 1", n)
		}

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, "hang", nil)
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		start = time.Now()
		cancel()
		if err := <-done; time.Since(start) != 0 || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v after %s, want context.Canceled at once", err, time.Since(start))
		}

		go func() {
			_, err := s.CallTool(context.Background(), "hang", nil)
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		start = time.Now()
		if err := s.Close(); err != nil {
			t.Logf("Close: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close with a call in flight took %s, want no time", d)
		}
		if err := <-done; err == nil || !strings.Contains(err.Error(), "server closed") || time.Since(start) != 0 {
			t.Errorf("the in-flight call: %v after %s, want a server closed error at once", err, time.Since(start))
		}
	})
}
