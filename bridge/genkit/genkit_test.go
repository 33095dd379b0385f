package genkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/ttalk/mcpbridge/bridge"
	mcpgenkit "github.com/ttalk/mcpbridge/bridge/genkit"
)

// scripted is a Genkit model that answers with its replies in order and records each
// request it was given.
type scripted struct {
	mu       sync.Mutex
	replies  []*ai.Message
	requests []*ai.ModelRequest
}

func (m *scripted) define(g *genkit.Genkit) ai.Model {
	return genkit.DefineModel(g, "test/scripted", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.requests = append(m.requests, req)
			if len(m.replies) == 0 {
				return nil, errors.New("scripted model: no reply left")
			}
			r := m.replies[0]
			m.replies = m.replies[1:]
			return &ai.ModelResponse{Message: r, FinishReason: ai.FinishReasonStop}, nil
		})
}

func callThenAnswer(name string, input any) *scripted {
	return &scripted{replies: []*ai.Message{
		ai.NewModelMessage(ai.NewToolRequestPart(&ai.ToolRequest{Name: name, Ref: "call_1", Input: input})),
		ai.NewModelTextMessage("done"),
	}}
}

// generate runs Genkit's own tool loop (genkit.Generate) with the server's tools.
func generate(t *testing.T, ctx context.Context, m *scripted, tools bridge.Tools) (*ai.ModelResponse, error) {
	t.Helper()
	g := genkit.Init(ctx)
	model := m.define(g)
	gt, err := mcpgenkit.Define(g, tools)
	if err != nil {
		t.Fatal(err)
	}
	return genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("weather in Lyon?"), ai.WithTools(mcpgenkit.Refs(gt)...))
}

// Genkit's tool loop calls the tool; it runs on the MCP server and its text (or the
// failure's text) is the tool response of the model's next turn.
func TestGenerateRunsToolOnServer(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		input      any
		want       string
		prefix     bool
		ran        []string
	}{
		{name: "result", tool: "forecast", input: map[string]any{"city": "Lyon"}, want: "Lyon: 21°C, sunny", ran: []string{`forecast {"city":"Lyon"}`}},
		{name: "tool error", tool: "forecast", input: map[string]any{"city": "Atlantis"}, want: "no weather station in Atlantis", ran: []string{`forecast {"city":"Atlantis"}`}},
		{name: "invalid arguments", tool: "forecast", input: map[string]any{"city": ""}, want: "error: ", prefix: true},
		{name: "not an object", tool: "forecast", input: []any{"Lyon"}, want: "error: ", prefix: true},
		{name: "denied", tool: "secret", input: map[string]any{}, want: "tool call denied: the secret tool is off limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &weather{}
			s := w.dial()
			defer s.Close()
			m := callThenAnswer(tc.tool, tc.input)
			resp, err := generate(t, context.Background(), m, s.Tools())
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Text() != "done" {
				t.Errorf("final text %q", resp.Text())
			}
			if len(m.requests) != 2 {
				t.Fatalf("model ran %d turns, want 2", len(m.requests))
			}
			msgs := m.requests[1].Messages
			last := msgs[len(msgs)-1]
			if last.Role != ai.RoleTool || len(last.Content) != 1 || !last.Content[0].IsToolResponse() {
				t.Fatalf("last message of turn 2 = %+v, want one tool response", last)
			}
			tr := last.Content[0].ToolResponse
			got, _ := tr.Output.(string)
			if tr.Ref != "call_1" || got != tc.want && !(tc.prefix && strings.HasPrefix(got, tc.want)) {
				t.Errorf("model read %q (ref %q), want %q", got, tr.Ref, tc.want)
			}
			if got := w.ran(); !reflect.DeepEqual(got, tc.ran) {
				t.Errorf("server ran %q, want %q", got, tc.ran)
			}
			// Genkit does not keep the order of the tools.
			offered := map[string]*ai.ToolDefinition{}
			for _, d := range m.requests[0].Tools {
				offered[d.Name] = d
			}
			if f := offered["forecast"]; len(offered) != 2 || f == nil || offered["secret"] == nil || f.InputSchema["required"] == nil {
				t.Errorf("model was offered %v, want forecast with its schema and secret", offered)
			}
		})
	}
}

// A transport failure (here: the server closed) ends Generate with an error; the server
// is not reached and the model gets no second turn.
func TestGenerateTransportFailure(t *testing.T) {
	w := &weather{}
	s := w.dial()
	tools := s.Tools()
	s.Close()
	m := callThenAnswer("forecast", map[string]any{"city": "Lyon"})
	_, err := generate(t, context.Background(), m, tools)
	// Genkit formats the tool's error with %v, so only its text survives.
	if err == nil || !strings.Contains(err.Error(), bridge.ErrServerClosed.Error()) {
		t.Fatalf("Generate error %v, want the server-closed failure", err)
	}
	if len(m.requests) != 1 || len(w.ran()) != 0 {
		t.Errorf("model turns %d, server calls %d; want 1 and 0", len(m.requests), len(w.ran()))
	}
}

// Generate's ctx reaches the server: progress arrives through bridge.WithProgress, and
// cancelling it ends the waiting call.
func TestContextAndProgress(t *testing.T) {
	w := &weather{release: make(chan struct{})} // never released
	s := w.dial()
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress []bridge.Progress
	ctx = bridge.WithProgress(ctx, func(_ context.Context, p bridge.Progress) {
		progress = append(progress, p)
		if len(progress) == 2 {
			cancel()
		}
	})
	m := callThenAnswer("forecast", map[string]any{"city": "Slow"})
	_, err := generate(t, ctx, m, s.Tools())
	if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), context.Canceled.Error())) {
		t.Fatalf("Generate error %v, want context canceled", err)
	}
	if len(progress) != 2 || progress[1].Message != "station 2 of 2" {
		t.Errorf("progress %+v, want both stations", progress)
	}
}

// Define refuses a second registration of a name by name, before registering anything.
func TestDefineTwice(t *testing.T) {
	w := &weather{}
	s := w.dial()
	defer s.Close()
	g := genkit.Init(context.Background())
	if _, err := mcpgenkit.Define(g, s.Tools()); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpgenkit.Define(g, s.Tools()); err == nil || !strings.Contains(err.Error(), `"forecast"`) {
		t.Fatalf("second Define: %v, want an error naming forecast", err)
	}
}

// What Genkit's map[string]any keeps of a schema: the keywords, with numbers as float64.
func TestSchemaAsMap(t *testing.T) {
	g := genkit.Init(context.Background())
	tools, err := mcpgenkit.Define(g, bridge.Tools{{Name: "t", Parameters: json.RawMessage(forecastSchema), Handler: func(context.Context, json.RawMessage) (string, error) { return "", nil }}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(tools[0].Definition().InputSchema)
	want := `{"properties":{"city":{"minLength":1,"type":"string"},"days":{"maximum":12345678901234567000,"type":"integer"}},"required":["city"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
