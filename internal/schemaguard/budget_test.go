package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/transport"
)

func TestMeasureSchema(t *testing.T) {
	lim := schemaLimits{maxCost: 1000, maxNodes: 100, maxDepth: 10}
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range n {
			fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
		}
		fmt.Fprintf(&b, `"d%d":true}}`, n)
		return b.String()
	}
	tests := []struct {
		name      string
		schema    string
		cost      int64
		recursive bool
		err       string
	}{
		{"leaf", `{"type":"string"}`, 1, false, ""},
		{"properties", `{"properties":{"a":{"type":"string"},"b":{}}}`, 3, false, ""},
		{"property named like a keyword", `{"properties":{"enum":{"allOf":[{},{}]},"default":{}}}`, 5, false, ""},
		{"data is not a schema", `{"enum":[{"allOf":[{},{}]}],"default":{"properties":{}}}`, 1, false, ""},
		{"defs unused", `{"$defs":{"a":{"allOf":[{},{}]}}}`, 1, false, ""},
		{"chain of 5", chain(5), 126, false, ""}, // d5=1, d(i)=1+2*(1+d(i+1)): d0=125, +1 for the root
		{"chain of 20", chain(20), 0, false, "over the budget of 1000"},
		{"anchor ref", `{"$defs":{"a":{"$anchor":"A","type":"string"}},"properties":{"x":{"$ref":"#A"},"y":{"$ref":"#A"}}}`, 5, false, ""},
		{"id ref", `{"$id":"https://x.example/root","$defs":{"a":{"$id":"a.json","type":"string"}},"properties":{"x":{"$ref":"a.json"}}}`, 3, false, ""},
		{"tree", `{"$defs":{"n":{"properties":{"k":{"items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"}`, 0, true, ""},
		{"too many nodes", `{"properties":{` + strings.Repeat(`"a":{},`, 0) + props(150) + `}}`, 0, false, "more than 100 subschemas"},
		{"too deep", strings.Repeat(`{"not":`, 12) + `{}` + strings.Repeat(`}`, 12), 0, false, "nest more than 10 levels"},
		{"external ref", `{"$ref":"https://example.com/s.json"}`, 0, false, "cannot be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc any
			dec := json.NewDecoder(strings.NewReader(tt.schema))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			st, err := measureSchema(doc, lim)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.cost != 0 && st.cost != tt.cost {
				t.Errorf("cost = %d, want %d", st.cost, tt.cost)
			}
			if st.recursive != tt.recursive {
				t.Errorf("recursive = %v, want %v", st.recursive, tt.recursive)
			}
		})
	}
}

func props(n int) string {
	var p []string
	for i := range n {
		p = append(p, fmt.Sprintf(`"p%d":{}`, i))
	}
	return strings.Join(p, ",")
}

// A server that announces tools/list_changed over and over makes the bridge re-list, but a
// schema whose bytes did not change is neither measured nor compiled again: the big tool
// keeps its compiled validator across every re-listing.
func TestRelistReusesCompiledSchemas(t *testing.T) {
	big := `{"type":"object","properties":{` + props(2000) + `}}`
	srv := mcp.NewServer(&mcp.Implementation{Name: "flapping", Version: "1"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(big)}, handler)
	var changes atomic.Int32
	cfg := ServerConfig{ID: "flapping", InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Dial(ctx, cfg, &Options{Logger: slog.New(slog.DiscardHandler), OnToolsChanged: func(ToolsChange) { changes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	validator := func() *lazySchema {
		rt, err := s.remoteTool("big")
		if err != nil {
			t.Fatal(err)
		}
		return rt.validator
	}
	first := validator()
	if first == nil || first.stats.nodes < 2000 {
		t.Fatalf("validator = %+v, want the big schema measured", first)
	}
	// The flapping tool: added and removed every 50 ms, each a list_changed.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if i%2 == 0 {
				srv.AddTool(&mcp.Tool{Name: "flap", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
			} else {
				srv.RemoveTools("flap")
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for changes.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	<-done
	if n := changes.Load(); n < 6 {
		t.Fatalf("only %d re-listings seen", n)
	}
	if got := validator(); got != first {
		t.Fatalf("the unchanged schema was measured again after %d re-listings", changes.Load())
	}
	first.mu.Lock()
	compiled := first.sch != nil
	first.mu.Unlock()
	if !compiled {
		t.Errorf("the big schema is not kept compiled")
	}
}

// measureSchema runs on every schema a server sends: it must never panic, and its work must
// stay linear (the fuzz engine's per-input timeout catches blow-ups).
func FuzzMeasureSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"allOf":[{"$ref":"#"},{"$ref":"#/$defs/x"}]}}}`,
		`{"$id":"http://a/b","$defs":{"c":{"$id":"c","$anchor":"z"}},"$ref":"c#z"}`,
		`{"$dynamicAnchor":"m","$dynamicRef":"#m","items":[{"$ref":"#/items/0"}]}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"#x","$ref":"#x"}`,
		`{"$ref":"#/%7E0"}`, `true`, `[]`, `{"$ref":"::"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var doc any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&doc) != nil {
			return
		}
		st, err := measureSchema(doc, schemaLimits{maxCost: 10_000, maxNodes: 500, maxDepth: 32})
		if err == nil && st.cost > 10_000 {
			t.Fatalf("cost %d over the budget without an error", st.cost)
		}
	})
}

// A read from a closed pipe ends the session: the next call redials (and a read-only call is
// retried) instead of failing on a dead session.
func TestReadFromClosedPipeIsDeadSession(t *testing.T) {
	sess := &session{dead: make(chan struct{}), conn: &transport.Conn{}}
	for _, err := range []error{
		&fs.PathError{Op: "read", Path: "|0", Err: os.ErrClosed},
		fmt.Errorf("calling %q: %w", "tools/call", &fs.PathError{Op: "read", Path: "|0", Err: os.ErrClosed}),
		errors.New("calling \"tools/call\": read |0: file already closed"),
	} {
		if !sessionDead(err, sess) {
			t.Errorf("sessionDead(%v) = false", err)
		}
	}
	if sessionDead(errors.New("tool said no"), sess) {
		t.Error("an ordinary error counts as a dead session")
	}
}

// When the listing's deadline has passed, schemas are measured on first use instead: a good
// schema still validates, an exponential one is still refused, and neither blocks.
func TestSchemaMeasuredOnFirstUseAfterDeadline(t *testing.T) {
	s := newServer(ServerConfig{ID: "late"}, resolve(&Options{Logger: slog.New(slog.DiscardHandler)}), nil)
	defer s.stop()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	good, p := s.schema(done, json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), "inputSchema")
	if good == nil || p != "" {
		t.Fatalf("schema = %v, %q", good, p)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := good.validate(ctx, map[string]any{"n": "x"}); !errors.Is(err, ErrInvalidArguments) {
		t.Errorf("validate = %v, want ErrInvalidArguments", err)
	}
	var chain strings.Builder
	chain.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&chain, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	chain.WriteString(`"d40":{"type":"string"}}}`)
	bad, _ := s.schema(done, json.RawMessage(chain.String()), "inputSchema")
	if err := bad.validate(ctx, "x"); !errors.Is(err, errValidationSkipped) {
		t.Errorf("validate = %v, want errValidationSkipped", err)
	}
}
