package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// handshakeGauge wraps an MCP handler: it counts the initialize and server/discover
// requests in flight (the most at once kept), and serves server/discover through a
// fixed capacity, slots requests at once each taking hold — a server host under load,
// whose answers queue behind one another.
type handshakeGauge struct {
	next  http.Handler
	slots chan struct{}
	hold  time.Duration

	inFlight, most   atomic.Int64
	discovers, inits atomic.Int64
	maxWait          atomic.Int64
}

func (g *handshakeGauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		g.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	if msg.Method == "initialize" || msg.Method == "server/discover" {
		n := g.inFlight.Add(1)
		for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
		}
		if msg.Method == "initialize" {
			g.inits.Add(1)
		}
		if msg.Method == "server/discover" {
			g.discovers.Add(1)
			st := time.Now()
			g.slots <- struct{}{}
			if w := int64(time.Since(st)); w > g.maxWait.Load() {
				g.maxWait.Store(w)
			}
			time.Sleep(g.hold) // the server's work on the request, not a wait for an event
			<-g.slots
		}
		// Out of the count before the answer is written: once the client has it, the
		// request is no longer in flight.
		g.inFlight.Add(-1)
	}
	g.next.ServeHTTP(w, r)
}

// TestConnectBoundsDials: Connect starts at most 32 servers at once (bridge's maxDials),
// and a server's connect timeout, and so its server/discover wait, starts only once it
// has its place. 200 stateless Streamable HTTP endpoints on one server process that
// answers server/discover 4 at a time, 25 ms each (160 a second: a host under load),
// with a connect timeout of 4 s (a discover wait of 1 s): every server ends up on
// 2026-07-28, where 200 dials at once would leave the last ~40 discovers queued past
// their wait (a fallback to initialize), and the server never sees more than 32
// handshakes in flight.
func TestConnectBoundsDials(t *testing.T) {
	const endpoints, bound = 200, 32
	mux, cfgs := echoEndpoints(endpoints, true)
	gauge := &handshakeGauge{next: mux, slots: make(chan struct{}, 4), hold: 25 * time.Millisecond}
	ts := httptest.NewServer(gauge)
	t.Cleanup(ts.Close)
	for i := range cfgs {
		cfgs[i].URL = ts.URL + cfgs[i].URL
	}
	set, err := bridge.Connect(testContext(t, testTimeout), cfgs, &bridge.Options{Logger: slog.New(slog.DiscardHandler), ConnectTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if f := set.Failed(); len(f) > 0 {
		t.Fatalf("%d skipped, the first: %v", len(f), f[0])
	}
	other := 0
	for _, s := range set.Servers() {
		if st := s.Status(); st.ProtocolVersion != "2026-07-28" {
			if other == 0 {
				t.Errorf("%s: %s (%s)", st.ID, st.ProtocolVersion, st.Negotiation)
			}
			other++
		}
	}
	if other > 0 {
		t.Errorf("%d of %d servers on another protocol than 2026-07-28", other, endpoints)
	}
	if most := gauge.most.Load(); most > bound {
		t.Errorf("%d handshakes in flight at once on the server, want at most %d", most, bound)
	}
	t.Logf("at most %d handshakes in flight; %d discovers, %d initializes, longest queue %v", gauge.most.Load(), gauge.discovers.Load(), gauge.inits.Load(), time.Duration(gauge.maxWait.Load()))
}
