package openai_test

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/ttalk/mcpbridge/bridge"
	mcpopenai "github.com/ttalk/mcpbridge/bridge/provider/openai"

	"github.com/ttalk/mcpbridge/bridge/provider"
	"github.com/ttalk/mcpbridge/internal/gluetest"
)

// fakeAPI is an OpenAI endpoint on loopback: it answers each request with the next of its
// replies (JSON as the API sends it) and keeps every request body.
type fakeAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies []string
	bodies  [][]byte
	paths   []string
}

func newFakeAPI(tb testing.TB, replies ...string) *fakeAPI {
	f := &fakeAPI{replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.bodies = append(f.bodies, body)
		f.paths = append(f.paths, r.URL.Path)
		if len(f.replies) == 0 {
			http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusInternalServerError)
			return
		}
		if strings.HasPrefix(f.replies[0], "data: ") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = io.WriteString(w, f.replies[0])
		f.replies = f.replies[1:]
	}))
	if tb != nil {
		tb.Cleanup(f.srv.Close)
	}
	return f
}

// options point an SDK client at the fake.
func (f *fakeAPI) options() []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(f.srv.URL + "/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0)}
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

// orderProperties is the "properties" member of gluetest.OrderSchema, byte for byte: the
// request must carry it so (order kept, the big maximum unrounded).
const orderProperties = `"properties":{"zeta":{"type":"integer","maximum":12345678901234567890},"alpha":{"type":"string"},"mid":{"type":"boolean"}}`

// A chat completion as the API sends it: three tool calls (a result, the tool's own failure,
// arguments the schema refuses).
const chatToolCalls = `{"id":"chatcmpl-9","object":"chat.completion","created":1764650000,"model":"gpt-4.1-2025-04-14",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
"tool_calls":[
 {"id":"call_1","type":"function","function":{"name":"echo","arguments":"{\"message\":\"hello\"}"}},
 {"id":"call_2","type":"function","function":{"name":"fail","arguments":"{}"}},
 {"id":"call_3","type":"function","function":{"name":"order","arguments":"{\"zeta\":\"many\"}"}}]},
"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160},"service_tier":"default","system_fingerprint":"fp_1"}`

const chatDone = `{"id":"chatcmpl-10","object":"chat.completion","created":1764650001,"model":"gpt-4.1-2025-04-14",
"choices":[{"index":0,"message":{"role":"assistant","content":"Done.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
"usage":{"prompt_tokens":200,"completion_tokens":2,"total_tokens":202}}`

// TestChatLoop runs two turns of an agent through the SDK's own client against a fake API:
// the SDK sends the tools (schemas as the server wrote them), its decoded tool calls go
// through Call, and the tool messages it sends back carry each outcome.
func TestChatLoop(t *testing.T) {
	set := connect(t)
	api := newFakeAPI(t, chatToolCalls, chatDone)
	client := openai.NewClient(api.options()...)
	chat, err := mcpopenai.NewChat(set.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4_1,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello, then order.")},
		Tools:    chat.Tools(),
	}
	completion, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	sent := api.body(t, 0)
	if !bytes.Contains(sent, []byte(orderProperties)) {
		t.Errorf("the request does not carry the order schema's properties as sent:\n%s", sent)
	}
	msg := completion.Choices[0].Message
	params.Messages = append(params.Messages, msg.ToParam())
	for _, call := range msg.ToolCalls {
		reply, err := chat.Call(ctx, call)
		if err != nil {
			t.Fatalf("%s: %v", call.Function.Name, err)
		}
		params.Messages = append(params.Messages, reply)
	}
	if _, err := client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	var second struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(api.body(t, 1), &second); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"call_1": "echo: hello", "call_2": gluetest.FailText, "call_3": "invalid arguments"}
	got := 0
	for _, m := range second.Messages {
		if m.Role != "tool" {
			continue
		}
		got++
		content, _ := m.Content.(string)
		if w, ok := want[m.ToolCallID]; !ok || !strings.Contains(content, w) {
			t.Errorf("tool message for %s = %q, want it to contain %q", m.ToolCallID, content, w)
		}
	}
	if got != len(want) {
		t.Errorf("%d tool messages sent, want %d:\n%s", got, len(want), api.body(t, 1))
	}
}

// TestChatCallOutcomes: what the model is to act on is a message and no error; a failure to
// reach the tool is the message and the Go error.
func TestChatCallOutcomes(t *testing.T) {
	tests := []struct {
		name, tool, args string
		closed           bool   // the server is closed first
		want             string // in the tool message's content
		hostErr          error  // nil: no Go error
	}{
		{name: "result", tool: "echo", args: `{"message":"hi"}`, want: "echo: hi"},
		{name: "tool failure", tool: "fail", args: `{}`, want: gluetest.FailText},
		{name: "invalid arguments", tool: "echo", args: `{"message":""}`, want: "invalid arguments"},
		{name: "arguments not JSON", tool: "echo", args: `{"message":`, want: "invalid arguments"},
		{name: "unknown tool", tool: "nope", args: `{}`, want: `unknown tool "nope"`},
		{name: "server closed", tool: "echo", args: `{"message":"hi"}`, closed: true, want: "error: ", hostErr: bridge.ErrServerClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := connect(t)
			chat, err := mcpopenai.NewChat(set.Tools(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				_ = set.Close()
			}
			var call openai.ChatCompletionMessageToolCallUnion
			raw, _ := json.Marshal(map[string]any{"id": "call_x", "type": "function", "function": map[string]string{"name": tc.tool, "arguments": tc.args}})
			if err := json.Unmarshal(raw, &call); err != nil {
				t.Fatal(err)
			}
			msg, err := chat.Call(context.Background(), call)
			switch {
			case tc.hostErr == nil && err != nil:
				t.Errorf("error %v, want none (the model acts on it)", err)
			case tc.hostErr != nil && !errors.Is(err, tc.hostErr):
				t.Errorf("error %v, want %v", err, tc.hostErr)
			}
			tm := msg.OfTool
			if tm == nil {
				t.Fatalf("not a tool message: %+v", msg)
			}
			if tm.ToolCallID != "call_x" || !strings.Contains(tm.Content.OfString.Value, tc.want) {
				t.Errorf("tool message %q for %q, want %q in it", tm.Content.OfString.Value, tm.ToolCallID, tc.want)
			}
		})
	}
}

// TestChatStrict: strict mode as provider has it, in the SDK's fields; the null the model
// must send for an optional property never reaches the server.
func TestChatStrict(t *testing.T) {
	set := connect(t)
	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range chat.Tools() {
		f := tool.GetFunction()
		if f == nil || !f.Strict.Value {
			t.Errorf("%+v: want a strict function", tool)
		}
	}
	call := openai.ChatCompletionMessageToolCallUnion{ID: "call_s", Type: "function",
		Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "order", Arguments: `{"zeta":3,"alpha":null,"mid":null}`}}
	msg, err := chat.Call(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.OfTool.Content.OfString.Value; got != `order: {"zeta":3}` {
		t.Errorf("server saw %q, want the nulls dropped", got)
	}
}

// TestChatDeferred: with deferred loading the first request has the search function only;
// a search loads tools into the conversation's next request, and another conversation
// starts without them.
func TestChatDeferred(t *testing.T) {
	set := connect(t)
	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Defer: &provider.Deferral{}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(tools []openai.ChatCompletionToolUnionParam) (out []string) {
		for _, tl := range tools {
			out = append(out, tl.GetFunction().Name)
		}
		return out
	}
	if got := names(chat.Tools()); strings.Join(got, ",") != "search_tools" {
		t.Fatalf("first tools %v, want only search_tools", got)
	}
	other := chat.Conversation()
	msg, err := chat.Call(context.Background(), openai.ChatCompletionMessageToolCallUnion{ID: "call_q", Type: "function",
		Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "search_tools", Arguments: `{"query":"place an order"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.OfTool.Content.OfString.Value, `"name":"order"`) {
		t.Errorf("search result %q does not load order", msg.OfTool.Content.OfString.Value)
	}
	got := names(chat.Tools())
	if len(got) < 2 || !strings.Contains(strings.Join(got, ","), "order") {
		t.Errorf("tools after the search %v, want order loaded", got)
	}
	if got := names(other.Tools()); strings.Join(got, ",") != "search_tools" {
		t.Errorf("the other conversation's tools %v, want only search_tools", got)
	}
	// The loaded function goes out through the SDK with its schema as sent.
	body, err := json.Marshal(openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4_1, Tools: chat.Tools(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(orderProperties)) {
		t.Errorf("request without the order schema as sent:\n%s", body)
	}
	_, err = chat.Call(context.Background(), openai.ChatCompletionMessageToolCallUnion{ID: "call_b", Type: "function",
		Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: "search_tools", Arguments: `{"query":""}`}})
	if err != nil {
		t.Errorf("a search with bad arguments is the model's to fix, got the Go error %v", err)
	}
}

// A Responses API response as the API sends it, with two function calls.
const responsesCalls = `{"id":"resp_1","object":"response","created_at":1764650000,"status":"completed","error":null,
"incomplete_details":null,"instructions":null,"model":"gpt-4.1-2025-04-14",
"output":[
 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"echo","arguments":"{\"message\":\"hi\"}","status":"completed"},
 {"type":"function_call","id":"fc_2","call_id":"call_2","name":"fail","arguments":"{}","status":"completed"}],
"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"auto","tools":[],"top_p":1.0,
"text":{"format":{"type":"text"}},"truncation":"disabled","usage":{"input_tokens":100,"output_tokens":20,"total_tokens":120,
"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}}}`

const responsesDone = `{"id":"resp_2","object":"response","created_at":1764650001,"status":"completed","model":"gpt-4.1-2025-04-14",
"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}],
"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"text":{"format":{"type":"text"}}}`

// TestResponsesLoop is TestChatLoop for the Responses API.
func TestResponsesLoop(t *testing.T) {
	set := connect(t)
	api := newFakeAPI(t, responsesCalls, responsesDone)
	client := openai.NewClient(api.options()...)
	tools, err := mcpopenai.NewResponses(set.Tools(), &provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT4_1,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hi.")},
		Tools: tools.Tools(),
	}
	resp, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(api.body(t, 0)), `"strict":true`) {
		t.Errorf("strict not sent:\n%s", api.body(t, 0))
	}
	var input []responses.ResponseInputItemUnionParam
	for _, item := range resp.Output {
		if item.Type != "function_call" {
			continue
		}
		out, err := tools.Call(ctx, item.AsFunctionCall())
		if err != nil {
			t.Fatal(err)
		}
		input = append(input, out)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	params.PreviousResponseID = openai.String(resp.ID)
	if _, err := client.Responses.New(ctx, params); err != nil {
		t.Fatal(err)
	}
	var second struct {
		Input []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(api.body(t, 1), &second); err != nil {
		t.Fatal(err)
	}
	if len(second.Input) != 2 || second.Input[0].Output != "echo: hi" || second.Input[1].Output != gluetest.FailText ||
		second.Input[0].Type != "function_call_output" || second.Input[0].CallID != "call_1" {
		t.Errorf("function_call_output items sent:\n%s", api.body(t, 1))
	}
}

// TestResponsesDeferred: deferred tools go out in their server's namespace with
// defer_loading, and a client tool_search_call is answered with a tool_search_output item
// the SDK sends with the found functions' schemas as written.
func TestResponsesDeferred(t *testing.T) {
	set := connect(t)
	tools, err := mcpopenai.NewResponses(set.Tools(), &provider.Options{Defer: &provider.Deferral{}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, tl := range tools.Tools() {
		kinds = append(kinds, *tl.GetType())
	}
	if strings.Join(kinds, ",") != "namespace,tool_search" {
		t.Fatalf("tools %v, want a namespace and tool_search", kinds)
	}
	body, _ := json.Marshal(responses.ResponseNewParams{Model: openai.ChatModelGPT4_1, Tools: tools.Tools()})
	if !bytes.Contains(body, []byte(orderProperties)) || !bytes.Contains(body, []byte(`"defer_loading":true`)) {
		t.Errorf("request:\n%s", body)
	}
	var item responses.ResponseOutputItemUnion
	if err := json.Unmarshal([]byte(`{"type":"tool_search_call","id":"ts_1","call_id":"call_t","execution":"client","status":"completed","arguments":{"query":"place an order"}}`), &item); err != nil {
		t.Fatal(err)
	}
	out, err := tools.Search(context.Background(), item.AsToolSearchCall())
	if err != nil {
		t.Fatal(err)
	}
	if out.OfToolSearchOutput == nil || out.OfToolSearchOutput.CallID.Value != "call_t" {
		t.Fatalf("not a tool_search_output for call_t: %+v", out)
	}
	sent, _ := json.Marshal(responses.ResponseNewParams{Model: openai.ChatModelGPT4_1,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{out}}})
	if !bytes.Contains(sent, []byte(orderProperties)) || !bytes.Contains(sent, []byte(`"type":"tool_search_output"`)) {
		t.Errorf("tool_search_output as sent:\n%s", sent)
	}
	if err := json.Unmarshal([]byte(`{"type":"tool_search_call","id":"ts_2","call_id":"call_u","execution":"server","status":"completed","arguments":{"query":"x"}}`), &item); err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Search(context.Background(), item.AsToolSearchCall()); err == nil {
		t.Error("a server-executed search was answered")
	}
}

// TestNewErrors: a tool the SDK cannot take is refused when built, not when sent.
func TestNewErrors(t *testing.T) {
	bad := []bridge.Tool{{Name: "bad", Parameters: json.RawMessage(`{"type":"object","properties":`)}}
	if _, err := mcpopenai.NewChat(bad, nil); err == nil {
		t.Error("NewChat took a schema that is not JSON")
	}
	if _, err := mcpopenai.NewResponses(bad, &provider.Options{Defer: &provider.Deferral{}}); err == nil {
		t.Error("NewResponses took a deferred schema that is not JSON")
	}
	dup := []bridge.Tool{{Name: "a", Parameters: json.RawMessage(`{}`)}, {Name: "a", Parameters: json.RawMessage(`{}`)}}
	if _, err := mcpopenai.NewChat(dup, nil); err == nil {
		t.Error("NewChat took two tools of one name")
	}
}

// FuzzChatCall: whatever name and arguments a model writes, Call answers the call's id with
// text for the model and no Go error while the server is up.
func FuzzChatCall(f *testing.F) {
	for _, s := range [][2]string{{"echo", `{"message":"hi"}`}, {"echo", `{"message":`}, {"order", `{"zeta":1e400}`},
		{"order", `{"zeta":12345678901234567890123}`}, {"", ""}, {"search_tools", `"x"`}, {"fail", "null"}, {"echo", "\xff"}} {
		f.Add(s[0], s[1])
	}
	set := connect(f)
	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Strict: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, args string) {
		msg, err := chat.Call(context.Background(), openai.ChatCompletionMessageToolCallUnion{ID: "call_f", Type: "function",
			Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: name, Arguments: args}})
		if err != nil {
			t.Fatalf("Call(%q, %q): %v", name, args, err)
		}
		if msg.OfTool == nil || msg.OfTool.ToolCallID != "call_f" || msg.OfTool.Content.OfString.Value == "" {
			t.Fatalf("Call(%q, %q) = %+v", name, args, msg)
		}
		if _, err := json.Marshal(msg); err != nil {
			t.Fatalf("the SDK cannot send the answer to (%q, %q): %v", name, args, err)
		}
	})
}

// TestChatConcurrentCalls: one turn's tool calls may run at once.
func TestChatConcurrentCalls(t *testing.T) {
	set := connect(t)
	chat, err := mcpopenai.NewChat(set.Tools(), &provider.Options{Defer: &provider.Deferral{Load: []string{"echo"}}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			name, args := "echo", `{"message":"m"}`
			if i%2 == 1 {
				name, args = "search_tools", `{"query":"order"}`
			}
			msg, err := chat.Call(context.Background(), openai.ChatCompletionMessageToolCallUnion{ID: "c", Type: "function",
				Function: openai.ChatCompletionMessageFunctionToolCallFunction{Name: name, Arguments: args}})
			if err == nil && msg.OfTool == nil {
				err = errors.New("no tool message")
			}
			errs[i] = err
			_ = chat.Tools()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// A streamed chat completion as the API sends it: one tool call whose arguments arrive in
// pieces.
const chatStream = `data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1764650000,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_s1","type":"function","function":{"name":"order","arguments":""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1764650000,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"zeta\":"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1764650000,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"12345678901234567890}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1764650000,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: [DONE]

`

// TestChatStreaming: a tool call put together by the SDK's ChatCompletionAccumulator (a
// value built in code, not decoded from one JSON object) goes through Call the same way,
// its arguments reaching the server as the model wrote them.
func TestChatStreaming(t *testing.T) {
	set := connect(t)
	api := newFakeAPI(t, chatStream)
	client := openai.NewClient(api.options()...)
	chat, err := mcpopenai.NewChat(set.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT4_1, Tools: chat.Tools(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Order.")},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("accumulated %+v, want one tool call", acc.Choices)
	}
	msg, err := chat.Call(ctx, acc.Choices[0].Message.ToolCalls[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.OfTool.Content.OfString.Value; got != `order: {"zeta":12345678901234567890}` || msg.OfTool.ToolCallID != "call_s1" {
		t.Errorf("tool message %q for %q", got, msg.OfTool.ToolCallID)
	}
}
