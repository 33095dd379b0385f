package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/ttalk/mcpbridge/bridge"
	mcplc "github.com/ttalk/mcpbridge/bridge/langchaingo"
)

// scripted is a langchaingo llms.Model that answers with its replies in order and records
// the messages and options of every turn.
type scripted struct {
	mu      sync.Mutex
	replies []*llms.ContentChoice
	turns   [][]llms.MessageContent
	opts    []llms.CallOptions
}

func (m *scripted) GenerateContent(_ context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns = append(m.turns, msgs)
	m.opts = append(m.opts, o)
	if len(m.replies) == 0 {
		return nil, errors.New("scripted model: no reply left")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{r}}, nil
}

func (m *scripted) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// text is everything the model read in one turn, as text.
func text(msgs []llms.MessageContent) string {
	var b strings.Builder
	for _, mc := range msgs {
		for _, p := range mc.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				b.WriteString(p.Text)
			case llms.ToolCallResponse:
				b.WriteString("[tool " + p.ToolCallID + "] " + p.Content)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

type agentKind struct {
	name  string
	make  func(llms.Model, bridge.Tools) agents.Agent
	reply func(tool, args string) *llms.ContentChoice // the model's tool call
	read  func(observation string) string             // how the observation appears next turn
	shown func(m *scripted) string                    // where the model saw the tools' descriptions
}

var kinds = []agentKind{
	{
		name: "one-shot (ReAct text)",
		make: func(m llms.Model, ts bridge.Tools) agents.Agent { return agents.NewOneShotAgent(m, mcplc.Tools(ts)) },
		reply: func(tool, args string) *llms.ContentChoice {
			return &llms.ContentChoice{Content: "Thought: I need the tool.\nAction: " + tool + "\nAction Input: " + args}
		},
		read:  func(obs string) string { return "Observation: " + obs },
		shown: func(m *scripted) string { return text(m.turns[0]) }, // the prompt
	},
	{
		name: "OpenAI functions",
		make: func(m llms.Model, ts bridge.Tools) agents.Agent {
			return agents.NewOpenAIFunctionsAgent(m, mcplc.Tools(ts))
		},
		reply: func(tool, args string) *llms.ContentChoice {
			wrapped, _ := json.Marshal(map[string]string{"__arg1": args})
			return &llms.ContentChoice{ToolCalls: []llms.ToolCall{{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: tool, Arguments: string(wrapped)}}}}
		},
		read: func(obs string) string { return "[tool call_1] " + obs },
		shown: func(m *scripted) string { // the function definitions
			var b strings.Builder
			for _, f := range m.opts[0].Functions {
				b.WriteString(f.Description + "\n")
			}
			return b.String()
		},
	},
}

// langchaingo's agent executor calls the tool; it runs on the MCP server and its text (or
// the failure's text) is the observation the model reads next turn.
func TestAgentRunsToolOnServer(t *testing.T) {
	for _, kind := range kinds {
		for _, tc := range []struct {
			name, tool, args string
			want             string
			ran              []string
		}{
			{name: "result", tool: "forecast", args: `{"city":"Lyon"}`, want: "Lyon: 21°C, sunny", ran: []string{`forecast {"city":"Lyon"}`}},
			{name: "tool error", tool: "forecast", args: `{"city":"Atlantis"}`, want: "no weather station in Atlantis", ran: []string{`forecast {"city":"Atlantis"}`}},
			{name: "invalid arguments", tool: "forecast", args: `{"city":""}`, want: `error: `},
			{name: "not JSON", tool: "forecast", args: `Lyon`, want: `error: `},
			{name: "denied", tool: "secret", args: `{}`, want: "tool call denied: the secret tool is off limits"},
		} {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				w := &weather{}
				s := w.dial()
				defer s.Close()
				m := &scripted{replies: []*llms.ContentChoice{kind.reply(tc.tool, tc.args), {Content: "Final Answer: done"}}}
				out, err := chains.Run(context.Background(), agents.NewExecutor(kind.make(m, s.Tools())), "weather in Lyon?")
				if err != nil {
					t.Fatalf("agent run: %v", err)
				}
				if !strings.Contains(out, "done") {
					t.Errorf("agent answered %q", out)
				}
				if len(m.turns) != 2 {
					t.Fatalf("model ran %d turns, want 2", len(m.turns))
				}
				if next := text(m.turns[1]); !strings.Contains(next, kind.read(tc.want)) {
					t.Errorf("model's next turn lacks %q:\n%s", kind.read(tc.want), next)
				}
				if got := w.ran(); !reflect.DeepEqual(got, tc.ran) {
					t.Errorf("server ran %q, want %q", got, tc.ran)
				}
				if first := kind.shown(m); !strings.Contains(first, `Input: a JSON object matching this JSON Schema: `+forecastSchema) {
					t.Errorf("the model was not shown the schema:\n%s", first)
				}
			})
		}
	}
}

// A transport failure (here: the server closed) stops the executor with the bridge's error.
func TestAgentTransportFailure(t *testing.T) {
	w := &weather{}
	s := w.dial()
	ts := s.Tools()
	s.Close()
	m := &scripted{replies: []*llms.ContentChoice{kinds[0].reply("forecast", `{"city":"Lyon"}`), {Content: "Final Answer: done"}}}
	_, err := chains.Run(context.Background(), agents.NewExecutor(kinds[0].make(m, ts)), "weather in Lyon?")
	if !errors.Is(err, bridge.ErrServerClosed) {
		t.Fatalf("run error %v, want one wrapping bridge.ErrServerClosed", err)
	}
	if len(m.turns) != 1 || len(w.ran()) != 0 {
		t.Errorf("model turns %d, server calls %d; want 1 and 0", len(m.turns), len(w.ran()))
	}
}

// Function calling without an agent: Functions in the request carry the schema as the
// server sent it, Run answers the model's tool calls, and the answers reach its next turn.
func TestFunctionCallingLoop(t *testing.T) {
	w := &weather{}
	s := w.dial()
	defer s.Close()
	ts := s.Tools()
	m := &scripted{replies: []*llms.ContentChoice{
		{ToolCalls: []llms.ToolCall{
			{ID: "a", Type: "function", FunctionCall: &llms.FunctionCall{Name: "forecast", Arguments: `{"city":"Lyon"}`}},
			{ID: "b", Type: "function", FunctionCall: &llms.FunctionCall{Name: "forecast", Arguments: `{"city":7}`}},
			{ID: "c", Type: "function", FunctionCall: &llms.FunctionCall{Name: "made_up", Arguments: `{}`}},
		}},
		{Content: "done"},
	}}
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "weather in Lyon?")}
	for range 3 {
		resp, err := m.GenerateContent(ctx, msgs, llms.WithTools(mcplc.Functions(ts)))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			break
		}
		ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		for _, tc := range choice.ToolCalls {
			ai.Parts = append(ai.Parts, tc)
		}
		msgs = append(msgs, ai)
		for _, tc := range choice.ToolCalls {
			r, err := mcplc.Run(ctx, ts, tc)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{r}})
		}
	}
	if len(m.turns) != 2 {
		t.Fatalf("model ran %d turns, want 2", len(m.turns))
	}
	next := text(m.turns[1])
	for _, want := range []string{"[tool a] Lyon: 21°C, sunny", "[tool b] error: ", `[tool c] error: tool "made_up": unknown tool`} {
		if !strings.Contains(next, want) {
			t.Errorf("next turn lacks %q:\n%s", want, next)
		}
	}
	if got := w.ran(); !reflect.DeepEqual(got, []string{`forecast {"city":"Lyon"}`}) {
		t.Errorf("server ran %q", got)
	}
	// The request's tools, written as langchaingo's clients write them: the schema's bytes.
	req, _ := json.Marshal(m.opts[0].Tools[0])
	want := `{"type":"function","function":{"name":"forecast","description":"Tomorrow's forecast for a city.","parameters":` + forecastSchema + `}}`
	if string(req) != want {
		t.Errorf("tool in request\n got %s\nwant %s", req, want)
	}
}

// The ctx reaches the server: progress arrives through bridge.WithProgress, and cancelling
// ends the waiting call with an error.
func TestContextAndProgress(t *testing.T) {
	w := &weather{release: make(chan struct{})} // never released
	s := w.dial()
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	ctx = bridge.WithProgress(ctx, func(context.Context, bridge.Progress) {
		if n++; n == 2 {
			cancel()
		}
	})
	_, err := mcplc.NewTool(s.Tools()[0]).Call(ctx, `{"city":"Slow"}`)
	if !errors.Is(err, context.Canceled) || n != 2 {
		t.Fatalf("err %v after %d progress notifications, want context.Canceled after 2", err, n)
	}
}
