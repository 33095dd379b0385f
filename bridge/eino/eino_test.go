package eino_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/eino"
)

// scripted is an Eino chat model that answers with its replies in order and records what
// it was given: the messages of each turn and the tools bound to it.
type scripted struct {
	mu      sync.Mutex
	replies []*schema.Message
	turns   [][]*schema.Message
	tools   []*schema.ToolInfo
}

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns = append(m.turns, append([]*schema.Message(nil), in...))
	if len(m.replies) == 0 {
		return nil, errors.New("scripted model: no reply left")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return r, nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	r, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{r}), nil
}

func (m *scripted) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.mu.Lock()
	m.tools = tools
	m.mu.Unlock()
	return m, nil
}

// callThenAnswer scripts one tool call, then a final answer.
func callThenAnswer(name, args string) *scripted {
	return &scripted{replies: []*schema.Message{
		schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}}),
		schema.AssistantMessage("done", nil),
	}}
}

// runAgent runs an ADK ChatModelAgent over tools and returns its events.
func runAgent(t *testing.T, ctx context.Context, m *scripted, tools []bridgeTool, opts *eino.Options, onEvent func(*adk.AgentEvent)) []*adk.AgentEvent {
	t.Helper()
	et, err := eino.Tools(tools, opts)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "forecaster", Description: "answers weather questions", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: et}},
	})
	if err != nil {
		t.Fatal(err)
	}
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "weather in Lyon?")
	var events []*adk.AgentEvent
	for {
		ev, ok := iter.Next()
		if !ok {
			return events
		}
		if onEvent != nil {
			onEvent(ev)
		}
		events = append(events, ev)
	}
}

type bridgeTool = bridge.Tool

// The agent calls the tool through Eino's ToolsNode; the tool runs on the MCP server and
// its text (or the failure's text) is the tool message of the model's next turn.
func TestAgentRunsToolOnServer(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		want             string // the tool message the model reads next
		prefix           bool   // want is a prefix
		ran              []string
	}{
		{name: "result", tool: "forecast", args: `{"city":"Lyon"}`, want: "Lyon: 21°C, sunny", ran: []string{`forecast {"city":"Lyon"}`}},
		{name: "tool error", tool: "forecast", args: `{"city":"Atlantis"}`, want: "no weather station in Atlantis", ran: []string{`forecast {"city":"Atlantis"}`}},
		{name: "invalid arguments", tool: "forecast", args: `{"city":""}`, want: "error: ", prefix: true},
		{name: "not an object", tool: "forecast", args: `["Lyon"]`, want: "error: ", prefix: true},
		{name: "denied", tool: "secret", args: `{}`, want: "tool call denied: the secret tool is off limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &weather{}
			s := w.dial()
			defer s.Close()
			m := callThenAnswer(tc.tool, tc.args)
			events := runAgent(t, context.Background(), m, s.Tools(), nil, nil)
			for _, ev := range events {
				if ev.Err != nil {
					t.Fatalf("agent run failed: %v", ev.Err)
				}
			}
			if len(m.turns) != 2 {
				t.Fatalf("model ran %d turns, want 2", len(m.turns))
			}
			last := m.turns[1][len(m.turns[1])-1]
			if last.Role != schema.Tool || last.ToolCallID != "call_1" {
				t.Fatalf("last message of turn 2 = %+v, want the tool's answer to call_1", last)
			}
			if got := last.Content; got != tc.want && !(tc.prefix && strings.HasPrefix(got, tc.want)) {
				t.Errorf("model read %q, want %q", got, tc.want)
			}
			if got := w.ran(); !reflect.DeepEqual(got, tc.ran) {
				t.Errorf("server ran %q, want %q", got, tc.ran)
			}
			if final := events[len(events)-1].Output.MessageOutput.Message; final == nil || final.Content != "done" {
				t.Errorf("final event %+v, want the model's answer", final)
			}
			if len(m.tools) != 2 || m.tools[0].Name != "forecast" {
				t.Errorf("model was bound %d tools, want forecast and secret", len(m.tools))
			}
		})
	}
}

// A transport failure (here: the server closed) is an error that stops the agent's run;
// the server is not reached and the model gets no second turn.
func TestAgentTransportFailureStopsRun(t *testing.T) {
	w := &weather{}
	s := w.dial()
	tools := s.Tools()
	s.Close()
	m := callThenAnswer("forecast", `{"city":"Lyon"}`)
	events := runAgent(t, context.Background(), m, tools, nil, nil)
	var runErr error
	for _, ev := range events {
		if ev.Err != nil {
			runErr = ev.Err
		}
	}
	if !errors.Is(runErr, bridge.ErrServerClosed) {
		t.Fatalf("run error %v, want one wrapping bridge.ErrServerClosed", runErr)
	}
	if len(m.turns) != 1 || len(w.ran()) != 0 {
		t.Errorf("model turns %d, server calls %d; want 1 and 0", len(m.turns), len(w.ran()))
	}
}

// With AgentEvents, the server's progress notifications reach the agent's event stream
// while the call runs, as bridge.Progress values, before the tool's result.
func TestAgentProgressEvents(t *testing.T) {
	w := &weather{release: make(chan struct{})}
	s := w.dial()
	defer s.Close()
	m := callThenAnswer("forecast", `{"city":"Slow"}`)
	var progress []bridge.Progress
	events := runAgent(t, context.Background(), m, s.Tools(), &eino.Options{AgentEvents: true}, func(ev *adk.AgentEvent) {
		if ev.Output == nil {
			return
		}
		if p, ok := ev.Output.CustomizedOutput.(bridge.Progress); ok {
			progress = append(progress, p)
			if len(progress) == 2 {
				close(w.release) // the server returns only once both were seen
			}
		}
	})
	for _, ev := range events {
		if ev.Err != nil {
			t.Fatalf("agent run failed: %v", ev.Err)
		}
	}
	if len(progress) != 2 || progress[0].Message != "station 1 of 2" || progress[1].Progress != 2 || progress[1].Total != 2 || progress[1].Tool != "forecast" || progress[1].Server != "weather" {
		t.Fatalf("progress events %+v, want stations 1 and 2 of 2 from weather/forecast", progress)
	}
	if got := m.turns[1][len(m.turns[1])-1].Content; got != "Slow: 21°C, sunny" {
		t.Errorf("model read %q", got)
	}
}

// Cancelling the run's context reaches the server: the waiting call ends.
func TestContextReachesServer(t *testing.T) {
	w := &weather{release: make(chan struct{})} // never released
	s := w.dial()
	defer s.Close()
	et, err := eino.NewTool(s.Tools()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = bridge.WithProgress(ctx, func(context.Context, bridge.Progress) { cancel() })
	_, err = et.InvokableRun(ctx, `{"city":"Slow"}`)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// The ToolInfo's schema, written as Eino's providers write it, is the server's inputSchema:
// every keyword and number kept, properties in order.
func TestSchemaKept(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"flat", forecastSchema},
		{"draft-7 definitions and ref", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"pt":{"type":"object","properties":{"x":{"type":"number"}}}},"properties":{"a":{"$ref":"#/definitions/pt"}},"dependencies":{"a":["b"]}}`},
		{"draft-4 boolean exclusiveMaximum", `{"type":"object","properties":{"n":{"type":"number","maximum":10,"exclusiveMaximum":true}}}`},
		{"tuple items and extension", `{"type":"object","properties":{"p":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false,"x-order":3}}}`},
		{"enum, const, default, examples keep numbers", `{"type":"object","properties":{"z":{"enum":[1,2.50,12345678901234567890]},"c":{"const":1e400},"d":{"default":null,"examples":[0.1]}},"additionalProperties":{"type":["string","null"]}}`},
		{"combinators", `{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},true],"not":{"const":"x"}}},"allOf":[{"required":["u"]}],"patternProperties":{"^x-":{"type":"string"}},"$defs":{"d":false}}`},
		{"boolean schema", `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			et, err := eino.NewTool(bridge.Tool{Name: "t", Parameters: json.RawMessage(tc.in), Handler: func(context.Context, json.RawMessage) (string, error) { return "", nil }}, nil)
			if err != nil {
				t.Fatal(err)
			}
			info, _ := et.Info(context.Background())
			js, err := info.ToJSONSchema()
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(js)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(decode(t, tc.in), decode(t, string(out))) {
				t.Errorf("schema changed:\n in: %s\nout: %s", tc.in, out)
			}
			if order(t, tc.in) != order(t, string(out)) {
				t.Errorf("properties order changed: %s, then %s", order(t, tc.in), order(t, string(out)))
			}
		})
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// order lists the top-level property names in the order written.
func order(t *testing.T, s string) string {
	t.Helper()
	var top struct{ Properties json.RawMessage }
	_ = json.Unmarshal([]byte(s), &top)
	if len(top.Properties) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	var names []string
	_, _ = dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		names = append(names, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	return strings.Join(names, ",")
}

// A schema Eino's type cannot hold is refused by name.
func TestSchemaRefused(t *testing.T) {
	_, err := eino.NewTool(bridge.Tool{Name: "bad", Parameters: json.RawMessage(`[1]`), Handler: func(context.Context, json.RawMessage) (string, error) { return "", nil }}, nil)
	if err == nil || !strings.Contains(err.Error(), `tool "bad"`) {
		t.Fatalf("err %v, want one naming the tool", err)
	}
}
