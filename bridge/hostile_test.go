package bridge_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/transport"
)

const mib = 1 << 20

// A server whose answer never ends (to initialize, or to one tools/call) costs the host at
// most a few copies of the per-message budget, fails with an error naming the limit, and
// leaves the host and the server's other tools working.
func TestHostileEndlessHTTPBody(t *testing.T) {
	initSrv := &hostileServer{endlessInit: true}
	callSrv := &hostileServer{
		tools: []string{
			`{"name":"endless","inputSchema":{"type":"object"}}`,
			`{"name":"fine","inputSchema":{"type":"object"}}`,
		},
		endlessTool: "endless",
	}
	opts := quiet()
	opts.MaxMessageBytes = 2 * mib
	opts.CallTimeout = 60 * time.Second
	mem := watchMemory()
	set, err := connectSet(t, []bridge.ServerConfig{
		{ID: "endless-init", URL: initSrv.start(t)},
		{ID: "endless-call", URL: callSrv.start(t)},
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	failed := set.Failed()
	if len(failed) != 1 || failed[0].Server != "endless-init" || failed[0].Phase != bridge.PhaseInitialize {
		t.Fatalf("failed = %v, want endless-init in phase initialize", failed)
	}
	if msg := failed[0].Error(); !strings.Contains(msg, "2097152 bytes") || !strings.Contains(msg, "MaxMessageBytes") {
		t.Errorf("initialize error %q does not name the limit", msg)
	}
	if !errors.Is(failed[0], transport.ErrMessageTooLarge) {
		t.Errorf("initialize error %v does not wrap ErrMessageTooLarge", failed[0])
	}

	tools := set.Tools()
	start := time.Now()
	_, err = byName(t, tools, "endless").Handler(ctxT(t, 60*time.Second), nil)
	elapsed := time.Since(start)
	growth, allocated := mem.end()
	t.Logf("peak heap growth %.1f MiB, allocated %.1f MiB, servers wrote %.1f MiB, call failed after %v",
		float64(growth)/mib, float64(allocated)/mib, float64(initSrv.written.Load()+callSrv.written.Load())/mib, elapsed.Round(time.Millisecond))
	se := asServerError(t, err)
	if se.Server != "endless-call" || se.Phase != bridge.PhaseCall || !errors.Is(err, transport.ErrMessageTooLarge) ||
		!strings.Contains(err.Error(), "MaxMessageBytes") {
		t.Fatalf("call error = %v, want a tools/call ServerError naming the limit", err)
	}
	if elapsed > 30*time.Second {
		t.Errorf("the call took %v: it was not stopped by the budget", elapsed)
	}
	// Two servers each sent one endless answer: the host holds a few copies of 2 MiB at most.
	if bound := uint64(64 * mib); growth > bound || allocated > 2*bound {
		t.Errorf("peak heap growth %d, allocated %d; want at most %d, %d", growth, allocated, bound, 2*bound)
	}
	if w := initSrv.written.Load() + callSrv.written.Load(); w > 256*mib {
		t.Errorf("servers wrote %d bytes before the bridge stopped reading", w)
	}

	// The host keeps running: the server's other tool works on a fresh session.
	out, err := byName(t, tools, "fine").Handler(ctxT(t, 30*time.Second), nil)
	if err != nil || out != "ok" {
		t.Fatalf("call after the overrun = %q, %v; want ok", out, err)
	}
}

// A tool list that never ends stops at the listing budget (tools or bytes), long before the
// page cap, and costs only that server.
func TestHostileEndlessToolList(t *testing.T) {
	endless := func(toolBytes int) func(string) ([]string, string) {
		pad := strings.Repeat("x", toolBytes)
		return func(cursor string) ([]string, string) {
			n := 0
			fmt.Sscanf(cursor, "%d", &n)
			var tools []string
			for i := range 100 {
				tools = append(tools, fmt.Sprintf(`{"name":"t%d_%d","description":%q,"inputSchema":{"type":"object"}}`, n, i, pad))
			}
			return tools, fmt.Sprint(n + 1)
		}
	}
	tests := []struct {
		name   string
		opts   func(*bridge.Options)
		page   func(string) ([]string, string)
		reason string
	}{
		{"tool count", func(o *bridge.Options) { o.MaxListTools = 1000 }, endless(10), "more than 1000 tools (Options.MaxListTools)"},
		{"bytes", func(o *bridge.Options) { o.MaxListBytes = 4 * mib }, endless(10 << 10), "more than 4194304 bytes of tool definitions (Options.MaxListBytes)"},
		{"default tool count", func(*bridge.Options) {}, endless(10), "more than 10000 tools (Options.MaxListTools)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &hostileServer{page: tt.page}
			good := &hostileServer{tools: []string{`{"name":"fine","inputSchema":{"type":"object"}}`}}
			opts := quiet()
			tt.opts(opts)
			mem := watchMemory()
			set, err := connectSet(t, []bridge.ServerConfig{{ID: "endless", URL: srv.start(t)}, {ID: "good", URL: good.start(t)}}, opts)
			growth, allocated := mem.end()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("peak heap growth %.1f MiB, allocated %.1f MiB", float64(growth)/mib, float64(allocated)/mib)
			failed := set.Failed()
			if len(failed) != 1 || failed[0].Phase != bridge.PhaseList || !strings.Contains(failed[0].Error(), tt.reason) {
				t.Fatalf("failed = %v, want endless in tools/list: %s", failed, tt.reason)
			}
			if names := names(set.Tools()); len(names) != 1 || names[0] != "fine" {
				t.Errorf("tools = %v, want [fine]", names)
			}
			if growth > 256*mib {
				t.Errorf("peak heap growth %d bytes", growth)
			}
		})
	}
}
