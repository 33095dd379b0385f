package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"github.com/ttalk/mcpbridge/bridge/provider/gemini"
	"github.com/ttalk/mcpbridge/internal/gluetest"
	"google.golang.org/genai"
)

// fakeAPI is a Gemini API endpoint on loopback: it answers each request with the next of
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
			http.Error(w, `{"error":{"code":500,"message":"no more replies","status":"INTERNAL"}}`, http.StatusInternalServerError)
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

// client is a genai client of the fake.
func (f *fakeAPI) client(ctx context.Context) (*genai.Client, error) {
	return genai.NewClient(ctx, &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: f.srv.URL}})
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

// A response as the API sends it: three function calls (a result, the tool's own failure,
// arguments the schema refuses).
const functionCalls = `{"candidates":[{"content":{"role":"model","parts":[
 {"functionCall":{"id":"fc-1","name":"echo","args":{"message":"hello"}}},
 {"functionCall":{"id":"fc-2","name":"fail","args":{}}},
 {"functionCall":{"id":"fc-3","name":"order","args":{"zeta":"many"}}}]},
"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":30,"totalTokenCount":150},
"modelVersion":"gemini-2.5-flash","responseId":"r-1"}`

const done = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Done."}]},"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":200,"candidatesTokenCount":2,"totalTokenCount":202},"modelVersion":"gemini-2.5-flash","responseId":"r-2"}`

// TestGenerateContentLoop runs two turns through the SDK's own client against a fake API:
// the SDK sends the function declarations (schemas as the server wrote them), its decoded
// function calls go through Call, and the functionResponse parts it sends back carry each
// outcome, "output" or "error".
func TestGenerateContentLoop(t *testing.T) {
	set := connect(t)
	api := newFakeAPI(t, functionCalls, done)
	ctx := context.Background()
	client, err := api.client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fns, err := gemini.NewFunctions(set.Tools(), nil)
	if err != nil {
		t.Fatal(err)
	}
	config := &genai.GenerateContentConfig{Tools: fns.Tools()}
	contents := []*genai.Content{genai.NewContentFromText("Say hello, then order.", genai.RoleUser)}
	resp, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config)
	if err != nil {
		t.Fatal(err)
	}
	// The glue's values carry the schema byte for byte; genai's client re-encodes the request
	// through map[string]any (keys sorted, numbers float64), so on the wire it is the
	// server's schema by value.
	if ours, _ := json.Marshal(config.Tools); !bytes.Contains(ours, []byte(orderProperties)) {
		t.Errorf("the SDK values do not carry the order schema's properties as sent:\n%s", ours)
	}
	var sent struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string `json:"name"`
				ParametersJSONSchema any    `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(api.body(t, 0), &sent); err != nil || len(sent.Tools) != 1 {
		t.Fatalf("request tools (%v):\n%s", err, api.body(t, 0))
	}
	for _, d := range sent.Tools[0].FunctionDeclarations {
		if d.Name != "order" {
			continue
		}
		var want any
		_ = json.Unmarshal([]byte(gluetest.OrderSchema), &want)
		if !reflect.DeepEqual(d.ParametersJSONSchema, want) {
			t.Errorf("order's schema as sent %v, want the server's %v", d.ParametersJSONSchema, want)
		}
	}
	contents = append(contents, resp.Candidates[0].Content)
	var parts []*genai.Part
	for _, call := range resp.FunctionCalls() {
		part, err := fns.Call(ctx, call)
		if err != nil {
			t.Fatalf("%s: %v", call.Name, err)
		}
		parts = append(parts, part)
	}
	contents = append(contents, genai.NewContentFromParts(parts, genai.RoleUser))
	if _, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, config); err != nil {
		t.Fatal(err)
	}
	var second struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					ID       string            `json:"id"`
					Name     string            `json:"name"`
					Response map[string]string `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(api.body(t, 1), &second); err != nil {
		t.Fatal(err)
	}
	wants := map[string][2]string{"fc-1": {"output", "echo: hello"}, "fc-2": {"error", gluetest.FailText}, "fc-3": {"error", "invalid arguments"}}
	got := 0
	for _, c := range second.Contents {
		for _, p := range c.Parts {
			fr := p.FunctionResponse
			if fr == nil {
				continue
			}
			got++
			w, ok := wants[fr.ID]
			if !ok || c.Role != "user" || len(fr.Response) != 1 || !strings.Contains(fr.Response[w[0]], w[1]) {
				t.Errorf("functionResponse %+v in a %q content, want %s containing %q", fr, c.Role, w[0], w[1])
			}
		}
	}
	if got != len(wants) {
		t.Errorf("%d functionResponse parts sent, want %d:\n%s", got, len(wants), api.body(t, 1))
	}
}

// TestCallOutcomes: what the model is to act on is a part and no error; a failure to reach
// the tool is the part and the Go error.
func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		name, tool string
		args       map[string]any
		closed     bool
		key, want  string
		hostErr    error
	}{
		{name: "result", tool: "echo", args: map[string]any{"message": "hi"}, key: "output", want: "echo: hi"},
		{name: "no arguments", tool: "fail", key: "error", want: gluetest.FailText},
		{name: "invalid arguments", tool: "echo", args: map[string]any{"message": 42}, key: "error", want: "invalid arguments"},
		{name: "unknown function", tool: "nope", key: "error", want: `unknown tool "nope"`},
		{name: "server closed", tool: "echo", args: map[string]any{"message": "hi"}, closed: true, key: "error", want: "error: ", hostErr: bridge.ErrServerClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := connect(t)
			fns, err := gemini.NewFunctions(set.Tools(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				_ = set.Close()
			}
			part, err := fns.Call(context.Background(), &genai.FunctionCall{Name: tc.tool, Args: tc.args})
			switch {
			case tc.hostErr == nil && err != nil:
				t.Errorf("error %v, want none (the model acts on it)", err)
			case tc.hostErr != nil && !errors.Is(err, tc.hostErr):
				t.Errorf("error %v, want %v", err, tc.hostErr)
			}
			fr := part.FunctionResponse
			if fr.Name != tc.tool || fr.ID != "" || len(fr.Response) != 1 || !strings.Contains(fmt.Sprint(fr.Response[tc.key]), tc.want) {
				t.Errorf("functionResponse %+v, want %s containing %q", fr, tc.key, tc.want)
			}
		})
	}
	if _, err := (&gemini.Functions{}).Call(context.Background(), nil); err == nil {
		t.Error("a nil call was answered")
	}
}

// TestGeminiParameters: the OpenAPI-subset field, adapted, in the SDK's *genai.Schema; the
// function without arguments has no parameters.
func TestGeminiParameters(t *testing.T) {
	set := connect(t)
	fns, err := gemini.NewFunctions(set.Tools(), &provider.Options{GeminiParameters: true})
	if err != nil {
		t.Fatal(err)
	}
	decls := fns.Tools()[0].FunctionDeclarations
	byName := map[string]*genai.FunctionDeclaration{}
	for _, d := range decls {
		byName[d.Name] = d
		if d.ParametersJsonSchema != nil {
			t.Errorf("%s: parametersJsonSchema set with GeminiParameters", d.Name)
		}
	}
	if p := byName["order"].Parameters; p == nil || !strings.EqualFold(string(p.Type), "object") || p.Properties["zeta"] == nil ||
		!strings.EqualFold(string(p.Properties["zeta"].Type), "integer") || len(p.Required) != 1 {
		t.Errorf("order's parameters %+v", p)
	}
	if p := byName["fail"].Parameters; p != nil {
		t.Errorf("fail takes no arguments, parameters %+v", p)
	}
	part, err := fns.Call(context.Background(), &genai.FunctionCall{Name: "order", Args: map[string]any{"zeta": 7}})
	if err != nil || part.FunctionResponse.Response["output"] != `order: {"zeta":7}` {
		t.Errorf("order call: %+v %v", part.FunctionResponse, err)
	}
}

// TestDeferred: the first request has the search function only; a search loads tools into
// the conversation's next request, and another conversation starts without them.
func TestDeferred(t *testing.T) {
	set := connect(t)
	fns, err := gemini.NewFunctions(set.Tools(), &provider.Options{Defer: &provider.Deferral{}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(tools []*genai.Tool) (out []string) {
		for _, tl := range tools {
			for _, d := range tl.FunctionDeclarations {
				out = append(out, d.Name)
			}
		}
		return out
	}
	if got := names(fns.Tools()); strings.Join(got, ",") != "search_tools" {
		t.Fatalf("first tools %v, want only search_tools", got)
	}
	other := fns.Conversation()
	part, err := fns.Call(context.Background(), &genai.FunctionCall{ID: "s1", Name: "search_tools", Args: map[string]any{"query": "place an order"}})
	if err != nil {
		t.Fatal(err)
	}
	if out := fmt.Sprint(part.FunctionResponse.Response["output"]); !strings.Contains(out, `"name":"order"`) {
		t.Errorf("search result %q does not load order", out)
	}
	if got := strings.Join(names(fns.Tools()), ","); !strings.Contains(got, "order") {
		t.Errorf("tools after the search %v, want order loaded", got)
	}
	if got := names(other.Tools()); strings.Join(got, ",") != "search_tools" {
		t.Errorf("the other conversation's tools %v, want only search_tools", got)
	}
	body, err := json.Marshal(fns.Tools())
	if err != nil || !bytes.Contains(body, []byte(orderProperties)) {
		t.Errorf("loaded tools without the order schema as sent (%v):\n%s", err, body)
	}
}

// TestNewErrors: a tool the SDK cannot take is refused when built, not when sent.
func TestNewErrors(t *testing.T) {
	bad := []bridge.Tool{{Name: "bad", Parameters: json.RawMessage(`{"type":"object","properties":`)}}
	if _, err := gemini.NewFunctions(bad, nil); err == nil {
		t.Error("NewFunctions took a schema that is not JSON")
	}
	if _, err := gemini.NewFunctions(bad, &provider.Options{Defer: &provider.Deferral{}}); err == nil {
		t.Error("NewFunctions took a deferred schema that is not JSON")
	}
}
