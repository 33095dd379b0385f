package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

func props(n int) string {
	var p []string
	for i := range n {
		p = append(p, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
	}
	return strings.Join(p, ",")
}

// A server that announces tools/list_changed over and over makes the bridge re-list, but a
// schema whose bytes did not change is neither measured nor compiled again: the big tool,
// whose inputSchema is not compiled at listing but on its first call, keeps its compiled
// validator across every re-listing.
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
	s, err := Dial(ctx, cfg, &Options{Logger: slog.New(slog.DiscardHandler), OnToolsChanged: func(context.Context, ToolsChange) { changes.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	validator := func() *schemaguard.Schema {
		rt, err := s.remoteTool("big")
		if err != nil {
			t.Fatal(err)
		}
		return rt.Validator
	}
	first := validator()
	if first == nil || first.Nodes() < 2000 {
		t.Fatalf("validator = %+v, want the big schema measured", first)
	}
	if first.Compiled() {
		t.Fatal("the big inputSchema was compiled at listing, want on its first call")
	}
	// A value the fast walk does not accept alone: the first use compiles the schema.
	if _, err := s.Tools()[0].Handler(ctx, json.RawMessage(`{"p0":"x"}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("the first call = %v, want ErrInvalidArguments", err)
	}
	if !first.Compiled() {
		t.Fatal("the big inputSchema is not compiled after its first call")
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
	if !first.Compiled() {
		t.Errorf("the big schema is not kept compiled")
	}
}

// When the listing's deadline has passed, schemas are still measured at listing (compiling
// waits for first use): a good schema validates on first use, an exponential one is refused
// at once with its problem, and neither blocks.
func TestSchemaMeasuredAfterDeadline(t *testing.T) {
	s := newServer(ServerConfig{ID: "late"}, resolve(&Options{Logger: slog.New(slog.DiscardHandler)}), nil)
	defer s.stop()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	good, p := schemaOf(done, s, json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), "inputSchema")
	if good == nil || p != "" {
		t.Fatalf("schema = %v, %q", good, p)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := good.Validate(ctx, map[string]any{"n": "x"}); !errors.Is(err, ErrInvalidArguments) {
		t.Errorf("validate = %v, want ErrInvalidArguments", err)
	}
	var chain strings.Builder
	chain.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&chain, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	chain.WriteString(`"d40":{"type":"string"}}}`)
	bad, p := schemaOf(done, s, json.RawMessage(chain.String()), "inputSchema")
	if bad != nil || !strings.Contains(p, "is over the validation budget") {
		t.Errorf("schema = %v, %q; want no validator and the over-budget problem", bad, p)
	}
}
