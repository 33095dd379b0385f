package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	mcpanthropic "github.com/ttalk/mcpbridge/bridge/provider/anthropic"
	"github.com/ttalk/mcpbridge/internal/gluetest"
)

// fakeAPI is an Anthropic endpoint on loopback: it answers each request with the next of
// its replies (JSON as the API sends it) and keeps every request body.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []string
	bodies  [][]byte
}

func newFakeAPI(tb testing.TB, replies ...string) *fakeAPI {
	f := &fakeAPI{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.bodies = append(f.bodies, body)
		if len(f.replies) == 0 {
			http.Error(w, `{"type":"error","error":{"type":"api_error","message":"no more replies"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, f.replies[0])
		f.replies = f.replies[1:]
	}))
	if tb != nil {
		tb.Cleanup(f.srv.Close)
	}
	return f
}

func (f *fakeAPI) options() []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(f.srv.URL), option.WithAPIKey("sk-ant-test"), option.WithMaxRetries(0)}
}

func (f *fakeAPI) body(tb testing.TB, i int) []byte {
	tb.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		tb.Fatalf("request %d was not made (%d made)", i, len(f.bodies))
	}
	return f.bodies[i]
}

func connect(tb testing.TB) *bridge.Set {
	tb.Helper()
	set, err := gluetest.Connect(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = set.Close() })
	return set
}

// orderProperties is the "properties" member of gluetest.OrderSchema, byte for byte.
const orderProperties = `"properties":{"zeta":{"type":"integer","maximum":12345678901234567890},"alpha":{"type":"string"},"mid":{"type":"boolean"}}`

// A message as the API sends it: text, then three tool_use blocks (a result, the tool's own
// failure, arguments the schema refuses).
const toolUses = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-6",
"content":[{"type":"text","text":"On it."},
 {"type":"tool_use","id":"toolu_1","name":"echo","input":{"message":"hello"}},
 {"type":"tool_use","id":"toolu_2","name":"fail","input":{}},
 {"type":"tool_use","id":"toolu_3","name":"order","input":{"zeta":"many"}}],
"stop_reason":"tool_use","stop_sequence":null,
"usage":{"input_tokens":120,"output_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"service_tier":"standard"}}`

const done = `{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-6",
"content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":200,"output_tokens":2}}`

// TestMessagesLoop runs two turns through the SDK's own client against a fake API: the SDK
// sends the tools (schemas as the server wrote them), its decoded tool_use blocks go
// through Call, and the tool_result blocks it sends back carry each outcome and is_error.
func TestMessagesLoop(t *testing.T) {
	set := connect(t)
	api := newFakeAPI(t, toolUses, done)
	client := anthropic.NewClient(api.options()...)
	tools, err := mcpanthropic.NewMessages(set.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_6,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello, then order."))},
		Tools:     tools.Tools(),
	}
	msg, err := client.Messages.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if sent := api.body(t, 0); !bytes.Contains(sent, []byte(orderProperties)) {
		t.Errorf("the request does not carry the order schema's properties as sent:\n%s", sent)
	}
	params.Messages = append(params.Messages, msg.ToParam())
	var results []anthropic.ContentBlockParamUnion
	for _, block := range msg.Content {
		if block.Type != "tool_use" {
			continue
		}
		result, err := tools.Call(ctx, block.AsToolUse())
		if err != nil {
			t.Fatalf("%s: %v", block.Name, err)
		}
		results = append(results, result)
	}
	params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
	if _, err := client.Messages.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	var second struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(api.body(t, 1), &second); err != nil {
		t.Fatal(err)
	}
	type want struct {
		text    string
		isError bool
	}
	wants := map[string]want{"toolu_1": {"echo: hello", false}, "toolu_2": {gluetest.FailText, true}, "toolu_3": {"invalid arguments", true}}
	got := 0
	for _, m := range second.Messages {
		for _, c := range m.Content {
			if c.Type != "tool_result" {
				continue
			}
			got++
			w, ok := wants[c.ToolUseID]
			if !ok || len(c.Content) != 1 || !strings.Contains(c.Content[0].Text, w.text) || c.IsError != w.isError {
				t.Errorf("tool_result %+v, want %+v", c, w)
			}
		}
	}
	if got != len(wants) {
		t.Errorf("%d tool_result blocks sent, want %d:\n%s", got, len(wants), api.body(t, 1))
	}
}

// TestCallOutcomes: what the model is to act on is a block and no error; a failure to reach
// the tool is the block and the Go error.
func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		name, tool, input string
		closed            bool
		want              string
		isError           bool
		hostErr           error
	}{
		{name: "result", tool: "echo", input: `{"message":"hi"}`, want: "echo: hi"},
		{name: "tool failure", tool: "fail", input: `{}`, want: gluetest.FailText, isError: true},
		{name: "invalid arguments", tool: "echo", input: `{"message":""}`, want: "invalid arguments", isError: true},
		{name: "arguments not an object", tool: "echo", input: `[1]`, want: "invalid arguments", isError: true},
		{name: "unknown tool", tool: "nope", input: `{}`, want: `unknown tool "nope"`, isError: true},
		{name: "server closed", tool: "echo", input: `{"message":"hi"}`, closed: true, want: "error: ", isError: true, hostErr: bridge.ErrServerClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := connect(t)
			tools, err := mcpanthropic.NewMessages(set.Tools(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				_ = set.Close()
			}
			var block anthropic.ToolUseBlock
			if err := json.Unmarshal([]byte(`{"type":"tool_use","id":"toolu_x","name":"`+tc.tool+`","input":`+tc.input+`}`), &block); err != nil {
				t.Fatal(err)
			}
			out, err := tools.Call(context.Background(), block)
			switch {
			case tc.hostErr == nil && err != nil:
				t.Errorf("error %v, want none (the model acts on it)", err)
			case tc.hostErr != nil && !errors.Is(err, tc.hostErr):
				t.Errorf("error %v, want %v", err, tc.hostErr)
			}
			r := out.OfToolResult
			if r == nil || r.ToolUseID != "toolu_x" || len(r.Content) != 1 || r.Content[0].OfText == nil {
				t.Fatalf("not a text tool_result for toolu_x: %+v", out)
			}
			if !strings.Contains(r.Content[0].OfText.Text, tc.want) || r.IsError.Value != tc.isError {
				t.Errorf("tool_result %q is_error %v, want %q is_error %v", r.Content[0].OfText.Text, r.IsError.Value, tc.want, tc.isError)
			}
		})
	}
}

// TestDeferred: deferred tools carry defer_loading (schemas as written) plus the search
// tool; a search_tools call is answered with tool_reference blocks the SDK sends; the hosted
// search is Anthropic's own tool type.
func TestDeferred(t *testing.T) {
	set := connect(t)
	tools, err := mcpanthropic.NewMessages(set.Tools(), &provider.Options{Defer: &provider.Deferral{Load: []string{"echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet4_6, MaxTokens: 10, Tools: tools.Tools(),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("x"))}}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{orderProperties, `"defer_loading":true`, `"name":"search_tools"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("request without %s:\n%s", want, body)
		}
	}
	if tl := tools.Tools()[0].OfTool; tl == nil || tl.Name != "echo" || tl.DeferLoading.Valid() {
		t.Errorf("first tool %+v, want echo loaded", tl)
	}
	var block anthropic.ToolUseBlock
	if err := json.Unmarshal([]byte(`{"type":"tool_use","id":"toolu_s","name":"search_tools","input":{"query":"place an order"}}`), &block); err != nil {
		t.Fatal(err)
	}
	out, err := tools.Call(context.Background(), block)
	if err != nil {
		t.Fatal(err)
	}
	r := out.OfToolResult
	if r == nil || len(r.Content) == 0 || r.Content[0].OfToolReference == nil || r.Content[0].OfToolReference.ToolName != "order" {
		t.Fatalf("search result %+v, want a tool_reference to order first", out)
	}
	sent, _ := json.Marshal(anthropic.NewUserMessage(out))
	if !bytes.Contains(sent, []byte(`{"tool_name":"order","type":"tool_reference"}`)) {
		t.Errorf("tool_reference as the SDK sends it:\n%s", sent)
	}

	hosted, err := mcpanthropic.NewMessages(set.Tools(), &provider.Options{Defer: &provider.Deferral{Search: provider.SearchHosted}})
	if err != nil {
		t.Fatal(err)
	}
	ht := hosted.Tools()
	if last := ht[len(ht)-1]; last.OfToolSearchToolBm25_20251119 == nil {
		t.Errorf("hosted search tool %+v, want the BM25 tool search tool", last)
	}
}

// TestAdapted: with schema adaptation the adapted schema is what the SDK sends.
func TestAdapted(t *testing.T) {
	set := connect(t)
	tools, err := mcpanthropic.NewMessages(set.Tools(), &provider.Options{Adapt: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, tl := range tools.Tools() {
		got, _ := json.Marshal(tl.OfTool.InputSchema)
		want := tools.Toolset().Reports()[i]
		var sent []struct {
			InputSchema json.RawMessage `json:"input_schema"`
		}
		b, _ := json.Marshal(tools.Toolset())
		_ = json.Unmarshal(b, &sent)
		if d := sameJSON(got, sent[i].InputSchema); d != "" {
			t.Errorf("%s (adapted %v): %s", want.Tool, want.Adapted, d)
		}
	}
}

func sameJSON(a, b []byte) string {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return "not JSON"
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	if !bytes.Equal(xa, ya) {
		return string(a) + " != " + string(b)
	}
	return ""
}

// TestNewErrors: a tool the SDK cannot take is refused when built, not when sent.
func TestNewErrors(t *testing.T) {
	bad := []bridge.Tool{{Name: "bad", Parameters: json.RawMessage(`{"type":"object","properties":`)}}
	if _, err := mcpanthropic.NewMessages(bad, nil); err == nil {
		t.Error("NewMessages took a schema that is not JSON")
	}
	if _, err := mcpanthropic.NewMessages(bad, &provider.Options{Defer: &provider.Deferral{}}); err == nil {
		t.Error("NewMessages took a deferred schema that is not JSON")
	}
}

// FuzzCall: whatever name and input a tool_use block holds, Call answers its id with a
// tool_result for the model and no Go error while the server is up.
func FuzzCall(f *testing.F) {
	for _, s := range [][2]string{{"echo", `{"message":"hi"}`}, {"echo", `{"message":`}, {"order", `{"zeta":1e400}`},
		{"order", `{"zeta":12345678901234567890123}`}, {"", ""}, {"fail", "null"}, {"echo", "\xff"}, {"echo", `"{}"`}} {
		f.Add(s[0], []byte(s[1]))
	}
	set := connect(f)
	tools, err := mcpanthropic.NewMessages(set.Tools(), &provider.Options{Adapt: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string, input []byte) {
		out, err := tools.Call(context.Background(), anthropic.ToolUseBlock{ID: "toolu_f", Name: name, Input: input})
		if err != nil {
			t.Fatalf("Call(%q, %q): %v", name, input, err)
		}
		r := out.OfToolResult
		if r == nil || r.ToolUseID != "toolu_f" || len(r.Content) != 1 || r.Content[0].OfText == nil || r.Content[0].OfText.Text == "" {
			t.Fatalf("Call(%q, %q) = %+v", name, input, out)
		}
		if _, err := json.Marshal(anthropic.NewUserMessage(out)); err != nil {
			t.Fatalf("the SDK cannot send the answer to (%q, %q): %v", name, input, err)
		}
	})
}
