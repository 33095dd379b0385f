package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/transport"
)

// endlessServer answers every POST with a body that never ends, in the given content type,
// and counts what it wrote. For text/event-stream it writes one event whose data never ends.
// The GET stream of the legacy SSE transport is answered the same way.
type endlessServer struct {
	ct      string
	written atomic.Int64
	done    atomic.Int32 // handlers that returned (the client stopped reading)
}

func (e *endlessServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer e.done.Add(1)
	w.Header().Set("Content-Type", e.ct)
	w.WriteHeader(http.StatusOK)
	if e.ct == "text/event-stream" {
		n, _ := w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\""))
		e.written.Add(int64(n))
	} else {
		n, _ := w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":"`))
		e.written.Add(int64(n))
	}
	chunk := []byte(strings.Repeat("A", 64<<10))
	for {
		n, err := w.Write(chunk)
		e.written.Add(int64(n))
		if err != nil || r.Context().Err() != nil {
			return
		}
		if e.written.Load() > 4<<30 { // a safety net for a broken client: 4 GiB
			return
		}
	}
}

// memWatch samples the heap while a test runs and reports the peak and the bytes allocated.
type memWatch struct {
	start runtime.MemStats
	peak  atomic.Uint64
	stop  chan struct{}
	done  chan struct{}
}

func watchMemory() *memWatch {
	runtime.GC()
	m := &memWatch{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.ReadMemStats(&m.start)
	go func() {
		defer close(m.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > m.peak.Load() {
				m.peak.Store(ms.HeapInuse)
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// end stops sampling and returns the peak heap in use and the bytes allocated meanwhile.
func (m *memWatch) end() (peak, allocated uint64) {
	close(m.stop)
	<-m.done
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return m.peak.Load(), ms.TotalAlloc - m.start.TotalAlloc
}

// TestEndlessHTTPBodyIsBounded: a server whose answer to initialize never ends must not grow
// the host's memory past the per-message budget. Without the budget go-sdk's io.ReadAll grows
// until the connect timeout (gigabytes on a fast link); with it the connection fails at the
// limit, the error names the limit, and the server sees the client stop reading.
func TestEndlessHTTPBodyIsBounded(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		kind     transport.Kind
		ct       string
		maxBytes int
		limit    int64
		what     string
	}{
		{"streamable json default limit", transport.KindHTTP, "application/json", 0, transport.DefaultMaxMessageBytes, "HTTP response body"},
		{"streamable json 1MiB", transport.KindHTTP, "application/json", mib, mib, "HTTP response body"},
		{"streamable sse event 1MiB", transport.KindHTTP, "text/event-stream", mib, mib, "SSE event"},
		{"legacy sse event 1MiB", transport.KindSSE, "text/event-stream", mib, mib, "SSE event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &endlessServer{ct: tt.ct}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			c, err := transport.Open(transport.Spec{ID: "endless", URL: hs.URL, MaxFrameBytes: tt.maxBytes}, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			mem := watchMemory()
			start := time.Now()
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
			cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			elapsed := time.Since(start)
			peak, allocated := mem.end()
			if err == nil {
				cs.Close()
				t.Fatal("connect succeeded against an endless body")
			}
			if ctx.Err() != nil {
				t.Fatalf("connect ran into the test deadline (%v) instead of the budget: %v", elapsed, err)
			}
			over := c.Overrun()
			var be *transport.BudgetError
			if !errors.As(over, &be) || !errors.Is(over, transport.ErrMessageTooLarge) {
				t.Fatalf("Overrun() = %v, want a *BudgetError (connect error: %v)", over, err)
			}
			if be.Limit != tt.limit || be.What != tt.what {
				t.Errorf("overrun = %+v, want limit %d, what %q", be, tt.limit, tt.what)
			}
			if !strings.Contains(be.Error(), "limit") {
				t.Errorf("error %q does not name the limit", be)
			}
			// The host held at most a few copies of one message: go-sdk's ReadAll doubles its
			// buffer, the SSE scanner keeps the event. 8x the limit plus slack is the bound.
			bound := uint64(8*tt.limit + 32*mib)
			t.Logf("limit %d MiB: peak heap in use %.1f MiB, allocated %.1f MiB, server wrote %.1f MiB, %v",
				tt.limit/mib, float64(peak)/mib, float64(allocated)/mib, float64(srv.written.Load())/mib, elapsed.Round(time.Millisecond))
			if allocated > bound {
				t.Errorf("allocated %d bytes while reading, want at most %d", allocated, bound)
			}
			if peak > bound+uint64(mem.start.HeapInuse) {
				t.Errorf("peak heap in use %d bytes, want at most %d above the start (%d)", peak, bound, mem.start.HeapInuse)
			}
			c.Close()
			waitFor(t, "the server's handler to see the client stop reading", 30*time.Second, func() bool {
				return srv.done.Load() > 0
			})
			if w := srv.written.Load(); w > 4*tt.limit+64*mib {
				t.Errorf("server wrote %d bytes before the client stopped; the client read far past the limit", w)
			}
		})
	}
}

// TestBudgetSmallAndLarge: a budget below a normal answer breaks the session with an
// overrun; one above it changes nothing.
func TestBudgetSmallAndLarge(t *testing.T) {
	ctx := testCtx(t)
	hs := newHTTPServer(t, transport.KindHTTP, false)
	// A budget far below a normal tools/list answer fails listing; far above passes. The
	// listing of the test server is a few hundred bytes per page.
	for _, tt := range []struct {
		max  int
		fail bool
	}{{64, true}, {1 << 16, false}} {
		c, err := transport.Open(transport.Spec{ID: "s", URL: hs.URL + "/mcp", MaxFrameBytes: tt.max}, transport.KindHTTP)
		if err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
		cs, err := client.Connect(ctx, c.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if tt.fail {
			if err == nil {
				cs.Close()
				t.Errorf("max %d: connect succeeded", tt.max)
			} else if c.Overrun() == nil {
				t.Errorf("max %d: connect failed without an overrun: %v", tt.max, err)
			}
		} else {
			if err != nil {
				t.Fatalf("max %d: %v", tt.max, err)
			}
			listAll(t, ctx, cs)
			if c.Overrun() != nil {
				t.Errorf("max %d: overrun %v", tt.max, c.Overrun())
			}
			cs.Close()
		}
		c.Close()
	}
}
