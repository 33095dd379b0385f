package bridge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hostileServer is a hand-written Streamable HTTP MCP server (stateless, JSON responses) that
// sends exactly the bytes a test gives it, for the failures a well-behaved SDK server cannot
// produce: endless bodies, endless listings, schemas no SDK would build.
type hostileServer struct {
	// endlessInit answers initialize with a body that never ends.
	endlessInit bool
	// page returns the raw tool objects of the page at cursor ("" is the first) and the next
	// cursor ("" for the last page). nil serves tools.
	page func(cursor string) (tools []string, next string)
	// tools are the raw tool objects of a one-page listing.
	tools []string
	// endlessTool is the name of a tool whose tools/call answer never ends.
	endlessTool string
	// results are raw tools/call results by tool name; the default is a text "ok".
	results map[string]string

	written  atomic.Int64 // bytes of endless bodies written
	finished atomic.Int32 // endless bodies that ended (the client stopped reading)
	calls    atomic.Int32 // tools/call requests answered normally
}

func (h *hostileServer) start(t testing.TB) string {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func (h *hostileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
			Name   string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(req.ID) == 0 { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch req.Method {
	case "initialize":
		if h.endlessInit {
			h.endless(w, r, req.ID)
			return
		}
		h.reply(w, req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile","version":"1"}}`)
	case "tools/list":
		tools, next := h.tools, ""
		if h.page != nil {
			tools, next = h.page(req.Params.Cursor)
		}
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		b.WriteString(strings.Join(tools, ","))
		b.WriteString(`]`)
		if next != "" {
			b.WriteString(`,"nextCursor":`)
			c, _ := json.Marshal(next)
			b.Write(c)
		}
		b.WriteString(`}`)
		h.reply(w, req.ID, b.String())
	case "tools/call":
		if req.Params.Name == h.endlessTool {
			h.endless(w, r, req.ID)
			return
		}
		h.calls.Add(1)
		if r, ok := h.results[req.Params.Name]; ok {
			h.reply(w, req.ID, r)
			return
		}
		h.reply(w, req.ID, `{"content":[{"type":"text","text":"ok"}]}`)
	case "ping":
		h.reply(w, req.ID, `{}`)
	default:
		h.replyRaw(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"method not found"}}`)
	}
}

func (h *hostileServer) reply(w http.ResponseWriter, id json.RawMessage, result string) {
	h.replyRaw(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`)
}

func (h *hostileServer) replyRaw(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, msg)
}

// endless writes a JSON-RPC answer whose result string never ends, until the client stops
// reading (or 4 GiB, a safety net for a broken client).
func (h *hostileServer) endless(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
	defer h.finished.Add(1)
	w.Header().Set("Content-Type", "application/json")
	n, _ := io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`)
	h.written.Add(int64(n))
	chunk := []byte(strings.Repeat("A", 64<<10))
	for h.written.Load() < 4<<30 && r.Context().Err() == nil {
		n, err := w.Write(chunk)
		h.written.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// memWatch samples the heap while a test runs.
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
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > m.peak.Load() {
				m.peak.Store(ms.HeapInuse)
			}
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// end stops sampling and returns the peak heap growth over the start and the bytes
// allocated meanwhile.
func (m *memWatch) end() (peakGrowth, allocated uint64) {
	close(m.stop)
	<-m.done
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak := m.peak.Load()
	if peak > m.start.HeapInuse {
		peakGrowth = peak - m.start.HeapInuse
	}
	return peakGrowth, ms.TotalAlloc - m.start.TotalAlloc
}
