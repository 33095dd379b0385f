package integration

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"google.golang.org/genai"
)

var updateProviderTestdata = flag.Bool("update-provider-testdata", false, "rewrite bridge/provider/testdata/servers from the npm servers")

// integrationServer is one npm server of the suite as the provider tests dial it.
type integrationServer struct {
	id, pkg string
	cfg     bridge.ServerConfig
}

// dialSuite dials every npm server of the suite, concurrently, through bridge.Dial.
func dialSuite(t testing.TB) ([]integrationServer, map[string]*bridge.Server) {
	t.Helper()
	s := requireServers(t)
	memory := s.stdio("memory", pkgMemory)
	memory.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	list := []integrationServer{
		{"everything", pkgEverything, s.stdio("everything", pkgEverything, "stdio")},
		{"filesystem", pkgFilesystem, s.stdio("filesystem", pkgFilesystem, t.TempDir())},
		{"memory", pkgMemory, memory},
		{"basic-vanillajs", pkgBasicVanillaJS, s.stdio("basic-vanillajs", pkgBasicVanillaJS, "--stdio")},
		{"system-monitor", pkgSystemMonitor, s.stdio("system-monitor", pkgSystemMonitor, "--stdio")},
	}
	ctx := testContext(t, testTimeout)
	log := testLogger(t)
	servers := make(map[string]*bridge.Server)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, is := range list {
		wg.Go(func() {
			srv, err := bridge.Dial(ctx, is.cfg, &bridge.Options{Logger: log})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("dial %s: %v", is.id, err)
				return
			}
			servers[is.id] = srv
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, srv := range servers {
			_ = srv.Close()
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	return list, servers
}

// TestProviderSchemas runs the provider layer on the real schemas of every npm server in the
// suite: the captured copies the property test uses are current, the shapes decode into the
// official SDKs' request types without losing anything, calls come back through the SDKs'
// response types, and every tool adapts for every target (the counts are logged).
func TestProviderSchemas(t *testing.T) {
	list, servers := dialSuite(t)
	deps, _ := readPins(t)

	t.Run("captured schemas are current", func(t *testing.T) {
		for _, is := range list {
			type tool struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			doc := struct {
				Source string `json:"source"`
				Tools  []tool `json:"tools"`
			}{Source: fmt.Sprintf("%s@%s, model-visible tools as mcpbridge lists them (integration.TestProviderSchemas)", is.pkg, deps[is.pkg])}
			for _, tl := range servers[is.id].Tools() {
				doc.Tools = append(doc.Tools, tool{Name: tl.Name, InputSchema: tl.Parameters})
			}
			want, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			file := filepath.Join("..", "bridge", "provider", "testdata", "servers", is.id+".json")
			if *updateProviderTestdata {
				if err := os.WriteFile(file, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(file)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s is stale or missing (%v); rerun with -update-provider-testdata", file, err)
			}
		}
	})

	var all bridge.Tools
	for _, is := range list {
		all = append(all, servers[is.id].Tools()...)
	}

	t.Run("request shapes decode into the SDKs", func(t *testing.T) {
		cases := []struct {
			format provider.Format
			opts   *provider.Options
			decode func(data []byte) (any, error)
		}{
			{provider.FormatOpenAI, nil, decodeInto[[]openai.ChatCompletionToolUnionParam]},
			{provider.FormatOpenAI, &provider.Options{Strict: true}, decodeInto[[]openai.ChatCompletionToolUnionParam]},
			{provider.FormatOpenAIResponses, nil, decodeInto[[]responses.ToolUnionParam]},
			{provider.FormatOpenAIResponses, &provider.Options{Strict: true}, decodeInto[[]responses.ToolUnionParam]},
			{provider.FormatAnthropic, nil, decodeInto[[]anthropic.ToolUnionParam]},
			{provider.FormatAnthropic, &provider.Options{Adapt: true}, decodeInto[[]anthropic.ToolUnionParam]},
			{provider.FormatGemini, &provider.Options{Adapt: true}, decodeInto[[]*genai.Tool]},
			{provider.FormatGemini, &provider.Options{GeminiParameters: true}, decodeInto[[]*genai.Tool]},
		}
		for _, tc := range cases {
			name := string(tc.format)
			if tc.opts != nil {
				name += fmt.Sprintf(" %+v", *tc.opts)
			}
			t.Run(name, func(t *testing.T) {
				ts, err := provider.New(tc.format, all, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				ours, err := json.Marshal(ts)
				if err != nil {
					t.Fatal(err)
				}
				sdk, err := tc.decode(ours)
				if err != nil {
					t.Fatalf("decode into the SDK type: %v", err)
				}
				again, err := json.Marshal(sdk)
				if err != nil {
					t.Fatal(err)
				}
				if d := jsonDiff(ours, again); d != "" {
					t.Errorf("the SDK's request type does not carry what we produce: %s", d)
				}
			})
		}
	})

	t.Run("tool calls through the SDKs' types", func(t *testing.T) {
		ctx := testContext(t, testTimeout)
		everything := servers["everything"].Tools()
		t.Run("openai", func(t *testing.T) {
			ts, _ := provider.New(provider.FormatOpenAI, everything, &provider.Options{Strict: true})
			var msg openai.ChatCompletionMessage
			mustUnmarshal(t, `{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_7","type":"function","function":{"name":"echo","arguments":"{\"message\":\"hi\"}"}}]}`, &msg)
			out, err := ts.Handle(ctx, json.RawMessage(msg.ToolCalls[0].RawJSON()))
			if err != nil {
				t.Fatal(err)
			}
			var p openai.ChatCompletionToolMessageParam
			roundTrip(t, out, &p)
			if p.ToolCallID != "call_7" || !strings.Contains(p.Content.OfString.Value, "hi") {
				t.Errorf("tool message = %s", out)
			}
		})
		t.Run("openai-responses", func(t *testing.T) {
			ts, _ := provider.New(provider.FormatOpenAIResponses, everything, nil)
			var call responses.ResponseFunctionToolCall
			mustUnmarshal(t, `{"type":"function_call","id":"fc_1","call_id":"call_8","name":"echo","arguments":"{\"message\":\"hey\"}","status":"completed"}`, &call)
			out, err := ts.Handle(ctx, json.RawMessage(call.RawJSON()))
			if err != nil {
				t.Fatal(err)
			}
			var p responses.ResponseInputItemFunctionCallOutputParam
			roundTrip(t, out, &p)
			if p.CallID.Value != "call_8" || !strings.Contains(p.Output.OfString.Value, "hey") {
				t.Errorf("function_call_output = %s", out)
			}
		})
		t.Run("anthropic", func(t *testing.T) {
			ts, _ := provider.New(provider.FormatAnthropic, everything, nil)
			var block anthropic.ToolUseBlock
			mustUnmarshal(t, `{"type":"tool_use","id":"toolu_9","name":"echo","input":{"message":42}}`, &block)
			out, err := ts.Handle(ctx, json.RawMessage(block.RawJSON()))
			if err != nil {
				t.Fatal(err)
			}
			// The SDK holds a string content as one text block; the API takes either.
			var p anthropic.ToolResultBlockParam
			mustUnmarshal(t, string(out), &p)
			if p.ToolUseID != "toolu_9" || !p.IsError.Value || len(p.Content) != 1 || p.Content[0].OfText == nil ||
				!strings.Contains(p.Content[0].OfText.Text, "invalid arguments") {
				t.Errorf("tool_result for invalid arguments = %s, want is_error with the validation message", out)
			}
		})
		t.Run("gemini", func(t *testing.T) {
			ts, _ := provider.New(provider.FormatGemini, everything, &provider.Options{GeminiParameters: true})
			part, _ := json.Marshal(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "fc-3", Name: "echo", Args: map[string]any{"message": "hallo"}}})
			out, err := ts.Handle(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			var p genai.Part
			roundTrip(t, out, &p)
			if p.FunctionResponse == nil || p.FunctionResponse.Name != "echo" || p.FunctionResponse.ID != "fc-3" || !strings.Contains(fmt.Sprint(p.FunctionResponse.Response["output"]), "hallo") {
				t.Errorf("functionResponse part = %s", out)
			}
		})
	})

	t.Run("adaptation per server", func(t *testing.T) {
		for _, is := range list {
			tools := servers[is.id].Tools()
			line := fmt.Sprintf("%-16s %3d tools:", is.id, len(tools))
			for _, target := range provider.Targets() {
				var rejected, left int
				for _, tl := range tools {
					if len(provider.Lint(tl, target)) > 0 {
						rejected++
					}
					a, err := provider.Adapt(tl.Parameters, target)
					if err != nil {
						t.Errorf("%s/%s: Adapt(%s): %v", is.id, tl.Name, target, err)
						continue
					}
					if !a.OK() {
						left++
						// Every tool of these servers adapts today; one that stops adapting is a
						// regression of the adapter (or a server change to look at).
						t.Errorf("%s/%s: %s still rejected after adapting: %v", is.id, tl.Name, target, a.Remaining)
					}
				}
				line += fmt.Sprintf("  %s %d→%d", target, rejected, left)
			}
			t.Log(line)
		}
	})
}

func decodeInto[T any](data []byte) (any, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}

func mustUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("unmarshal %s: %v", s, err)
	}
}

// roundTrip decodes data into an SDK type and checks that the SDK marshals it back the same.
func roundTrip(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s into %T: %v", data, v, err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if d := jsonDiff(data, again); d != "" {
		t.Errorf("%T does not carry %s: %s", v, data, d)
	}
}

// jsonDiff compares two JSON documents by value and describes the first difference.
func jsonDiff(a, b []byte) string {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return err.Error()
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err.Error()
	}
	return firstDiff("", x, y)
}

func firstDiff(path string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s: object became %T", path, y)
		}
		for k, e := range xv {
			f, ok := yv[k]
			if !ok {
				return fmt.Sprintf("at %s: %q dropped", path, k)
			}
			if d := firstDiff(path+"/"+k, e, f); d != "" {
				return d
			}
		}
		for k := range yv {
			if _, ok := xv[k]; !ok {
				return fmt.Sprintf("at %s: %q added (%v)", path, k, yv[k])
			}
		}
		return ""
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return fmt.Sprintf("at %s: array changed", path)
		}
		for i := range xv {
			if d := firstDiff(fmt.Sprintf("%s/%d", path, i), xv[i], yv[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(x, y) {
		return fmt.Sprintf("at %s: %v became %v", path, x, y)
	}
	return ""
}
