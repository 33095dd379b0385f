package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"google.golang.org/genai"
)

// sweepReplica connects, in process, one go-sdk server per server of the compatibility
// sweep's capture (sweepToolsFile), each offering the captured tools with their schemas
// byte for byte and the captured instructions. Calls answer "<server>/<tool> ran with
// <arguments>". It is the sweep's 450 tools without npm.
func sweepReplica(t testing.TB) *bridge.Set {
	t.Helper()
	data, err := os.ReadFile(sweepToolsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc sweepTools
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var cfgs []bridge.ServerConfig
	for _, s := range doc.Servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: s.ServerName, Version: s.ServerVersion}, &mcp.ServerOptions{Instructions: s.Instructions})
		for _, tl := range s.Tools {
			remote := tl.Name
			if tl.RemoteName != "" {
				remote = tl.RemoteName
			}
			srv.AddTool(&mcp.Tool{Name: remote, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s/%s ran with %s", s.ID, remote, req.Params.Arguments)}}}, nil
				})
		}
		cfgs = append(cfgs, bridge.ServerConfig{ID: s.ID, InProcess: func() (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			if _, err := srv.Connect(context.Background(), st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}})
	}
	set, err := bridge.Connect(testContext(t, time.Minute), cfgs, &bridge.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	if len(set.Failed()) > 0 || len(set.Tools()) < 400 {
		t.Fatalf("replica: %d failed, %d tools", len(set.Failed()), len(set.Tools()))
	}
	return set
}

// Every deferred-loading shape decodes into the official SDK's request type without losing
// anything, search calls come in through the SDKs' response types and go out in their
// request types, and deferred tools are called like loaded ones.
func TestDeferredLoading(t *testing.T) {
	set := sweepReplica(t)
	all := set.Tools()
	cases := []struct {
		format provider.Format
		search provider.SearchMode
		decode func(data []byte) (any, error)
	}{
		{provider.FormatOpenAI, provider.SearchClient, decodeInto[[]openai.ChatCompletionToolUnionParam]},
		{provider.FormatOpenAIResponses, provider.SearchClient, decodeInto[[]responses.ToolUnionParam]},
		{provider.FormatOpenAIResponses, provider.SearchHosted, decodeInto[[]responses.ToolUnionParam]},
		{provider.FormatAnthropic, provider.SearchClient, decodeInto[[]anthropic.ToolUnionParam]},
		{provider.FormatAnthropic, provider.SearchHosted, decodeInto[[]anthropic.ToolUnionParam]},
		{provider.FormatAnthropic, provider.SearchRegex, decodeInto[[]anthropic.ToolUnionParam]},
		{provider.FormatGemini, provider.SearchClient, decodeInto[[]*genai.Tool]},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s", tc.format, tc.search), func(t *testing.T) {
			ts, err := provider.New(tc.format, all, &provider.Options{Defer: &provider.Deferral{Search: tc.search, Load: []string{"sequentialthinking"}}})
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
			if !strings.Contains(string(ours), `"sequentialthinking"`) {
				t.Errorf("the Load glob's tool is not in the list")
			}
		})
	}

	// Each client search: the model asks, the bridge's index answers in the API's own shape,
	// and the loaded tool is then called as any other.
	const query = "open a new issue in my GitHub repo"
	t.Run("openai-responses tool_search_call", func(t *testing.T) {
		ctx := testContext(t, time.Minute) // its own: the subtests before it spend none of it
		ts, _ := provider.New(provider.FormatOpenAIResponses, all, &provider.Options{Defer: &provider.Deferral{}})
		var call responses.ResponseToolSearchCall
		mustUnmarshal(t, `{"type":"tool_search_call","id":"tsc_1","call_id":"call_s","arguments":{"query":"`+query+`"},"execution":"client","status":"completed"}`, &call)
		out, err := ts.Handle(ctx, json.RawMessage(call.RawJSON()))
		if err != nil {
			t.Fatal(err)
		}
		var p responses.ResponseToolSearchOutputItemParam
		roundTrip(t, out, &p)
		if p.CallID.Value != "call_s" || len(p.Tools) == 0 || p.Tools[0].OfNamespace == nil || p.Tools[0].OfNamespace.Name != "github" ||
			p.Tools[0].OfNamespace.Tools[0].OfFunction == nil || p.Tools[0].OfNamespace.Tools[0].OfFunction.Name != "create_issue" {
			t.Errorf("tool_search_output = %s, want the github namespace with create_issue first", out)
		}
		var fc responses.ResponseFunctionToolCall
		mustUnmarshal(t, `{"type":"function_call","id":"fc_1","call_id":"call_f","namespace":"github","name":"create_issue","arguments":"{\"owner\":\"o\",\"repo\":\"r\",\"title\":\"bug\"}","status":"completed"}`, &fc)
		out, err = ts.Handle(ctx, json.RawMessage(fc.RawJSON()))
		if err != nil {
			t.Fatal(err)
		}
		var r responses.ResponseInputItemFunctionCallOutputParam
		roundTrip(t, out, &r)
		if !strings.Contains(r.Output.OfString.Value, "github/create_issue ran with") {
			t.Errorf("deferred tool call = %s", out)
		}
		hosted, _ := provider.New(provider.FormatOpenAIResponses, all, &provider.Options{Defer: &provider.Deferral{Search: provider.SearchHosted}})
		if _, err := hosted.Handle(ctx, json.RawMessage(`{"type":"tool_search_call","call_id":"x","execution":"server","arguments":{}}`)); err == nil {
			t.Errorf("a server-executed tool_search_call has nothing to answer: want an error")
		}
	})
	t.Run("anthropic tool_reference", func(t *testing.T) {
		ctx := testContext(t, time.Minute) // its own: the subtests before it spend none of it
		ts, _ := provider.New(provider.FormatAnthropic, all, &provider.Options{Defer: &provider.Deferral{}})
		var block anthropic.ToolUseBlock
		mustUnmarshal(t, `{"type":"tool_use","id":"toolu_s","name":"search_tools","input":{"query":"`+query+`"}}`, &block)
		out, err := ts.Handle(ctx, json.RawMessage(block.RawJSON()))
		if err != nil {
			t.Fatal(err)
		}
		var p anthropic.ToolResultBlockParam
		roundTrip(t, out, &p)
		if p.ToolUseID != "toolu_s" || len(p.Content) == 0 || p.Content[0].OfToolReference == nil || p.Content[0].OfToolReference.ToolName != "create_issue" {
			t.Errorf("tool_result = %s, want tool_reference create_issue first", out)
		}
		mustUnmarshal(t, `{"type":"tool_use","id":"toolu_c","name":"create_issue","input":{"owner":"o","repo":"r","title":"bug"}}`, &block)
		out, _ = ts.Handle(ctx, json.RawMessage(block.RawJSON()))
		if !strings.Contains(string(out), "github/create_issue ran with") {
			t.Errorf("deferred tool call = %s", out)
		}
		mustUnmarshal(t, `{"type":"tool_use","id":"toolu_n","name":"search_tools","input":{"query":"zzzz qqqq"}}`, &block)
		out, _ = ts.Handle(ctx, json.RawMessage(block.RawJSON()))
		p = anthropic.ToolResultBlockParam{}
		mustUnmarshal(t, string(out), &p) // the SDK holds a string content as one text block
		if len(p.Content) != 1 || p.Content[0].OfText == nil || !strings.Contains(p.Content[0].OfText.Text, "No tool matches") {
			t.Errorf("no match = %s", out)
		}
	})
	t.Run("chat completions conversation", func(t *testing.T) {
		ctx := testContext(t, time.Minute) // its own: the subtests before it spend none of it
		ts, _ := provider.New(provider.FormatOpenAI, all, &provider.Options{Defer: &provider.Deferral{}})
		conv := ts.Conversation()
		var msg openai.ChatCompletionMessage
		mustUnmarshal(t, `{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"call_s","type":"function","function":{"name":"search_tools","arguments":"{\"query\":\"`+query+`\"}"}}]}`, &msg)
		out, err := conv.Handle(ctx, json.RawMessage(msg.ToolCalls[0].RawJSON()))
		if err != nil {
			t.Fatal(err)
		}
		var p openai.ChatCompletionToolMessageParam
		roundTrip(t, out, &p)
		if !strings.Contains(p.Content.OfString.Value, `{"name":"create_issue"`) {
			t.Errorf("search result = %s", out)
		}
		if l := conv.Loaded(); !slices.Contains(l, "create_issue") || len(l) > 5 {
			t.Errorf("Loaded = %v", l)
		}
		next, err := json.Marshal(conv)
		if err != nil {
			t.Fatal(err)
		}
		var sdk []openai.ChatCompletionToolUnionParam
		roundTrip(t, next, &sdk)
		var names []string
		for _, tl := range sdk {
			names = append(names, tl.OfFunction.Function.Name)
		}
		if !slices.Contains(names, "create_issue") || !slices.Contains(names, "search_tools") || len(names) > 10 {
			t.Errorf("next request's tools = %v, want the loaded tools and search_tools", names)
		}
	})
	t.Run("gemini conversation", func(t *testing.T) {
		ctx := testContext(t, time.Minute) // its own: the subtests before it spend none of it
		ts, _ := provider.New(provider.FormatGemini, all, &provider.Options{Defer: &provider.Deferral{}, GeminiParameters: true})
		conv := ts.Conversation()
		part, _ := json.Marshal(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "fc-s", Name: "search_tools", Args: map[string]any{"query": "list all pods in the kube-system namespace"}}})
		out, err := conv.Handle(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		var p genai.Part
		roundTrip(t, out, &p)
		if p.FunctionResponse == nil || !strings.Contains(fmt.Sprint(p.FunctionResponse.Response["output"]), "kubectl_get") {
			t.Errorf("functionResponse = %s", out)
		}
		next, _ := json.Marshal(conv)
		var sdk []*genai.Tool
		roundTrip(t, next, &sdk)
		if len(sdk) != 1 || len(sdk[0].FunctionDeclarations) < 2 {
			t.Fatalf("next request's tools = %s", next)
		}
		part, _ = json.Marshal(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "fc-g", Name: "kubectl_get", Args: map[string]any{"resourceType": "pods", "namespace": "kube-system"}}})
		out, _ = conv.Handle(ctx, part)
		if !strings.Contains(string(out), "kubernetes/kubectl_get ran with") {
			t.Errorf("deferred tool call = %s", out)
		}
	})
}

// TestUpfrontTokens measures what the model reads before it says anything, for the sweep's
// tools and every format: everything loaded against everything deferred (BENCHMARKS.md).
// Deferred must stay under a tenth of loaded.
func TestUpfrontTokens(t *testing.T) {
	set := sweepReplica(t)
	logUpfront(t, "sweep", set.Tools(), true)
}

// upfront is what the model reads before it searches, in o200k_base tokens, for one format:
// every tool loaded, every tool deferred with the bridge's search, and with the API's own
// search (hosted false when the format has none).
type upfront struct {
	format                 provider.Format
	loaded, client, hosted int
	hasHosted              bool
}

func measureUpfront(tb testing.TB, tools bridge.Tools) []upfront {
	tb.Helper()
	tc := tokens.New()
	var out []upfront
	for _, f := range provider.Formats() {
		count := func(o *provider.Options) (int, bool) {
			ts, err := provider.New(f, tools, o)
			if err != nil {
				return 0, false
			}
			up, err := ts.Upfront()
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			return tc.JSON(up), true
		}
		u := upfront{format: f}
		u.loaded, _ = count(nil)
		u.client, _ = count(&provider.Options{Defer: &provider.Deferral{}})
		u.hosted, u.hasHosted = count(&provider.Options{Defer: &provider.Deferral{Search: provider.SearchHosted}})
		out = append(out, u)
	}
	return out
}

// logUpfront logs a table of upfront tokens per format for tools.
func logUpfront(t *testing.T, name string, tools bridge.Tools, holdToTarget bool) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d tools\n| format | all loaded | deferred, bridge search | deferred, API search |\n|---|---|---|---|\n", name, len(tools))
	for _, u := range measureUpfront(t, tools) {
		h := "—"
		if u.hasHosted {
			h = fmt.Sprintf("%d (%.1f %%)", u.hosted, 100*float64(u.hosted)/float64(u.loaded))
		}
		fmt.Fprintf(&b, "| %s | %d | %d (%.1f %%) | %s |\n", u.format, u.loaded, u.client, 100*float64(u.client)/float64(u.loaded), h)
		if holdToTarget && (u.client*10 >= u.loaded || u.hasHosted && u.hosted*10 >= u.loaded) {
			t.Errorf("%s: deferred upfront tokens %d / %d are not under 10 %% of %d", u.format, u.client, u.hosted, u.loaded)
		}
	}
	t.Logf("upfront tokens (o200k_base):\n%s", b.String())
}

// BenchmarkUpfrontTokens reports upfront tokens per format as metrics, for the sweep's
// tools (in process) and the suite's npm servers, for the BENCHMARKS.md generator.
func BenchmarkUpfrontTokens(b *testing.B) {
	sweep := sweepReplica(b)
	list, servers := dialSuite(b)
	var suite bridge.Tools
	for _, is := range list {
		suite = append(suite, servers[is.id].Tools()...)
	}
	var res [2][]upfront
	for b.Loop() {
		res[0], res[1] = measureUpfront(b, sweep.Tools()), measureUpfront(b, suite)
	}
	b.ReportMetric(float64(len(sweep.Tools())), "sweep-tools")
	b.ReportMetric(float64(len(suite)), "suite-tools")
	for i, set := range []string{"sweep", "suite"} {
		for _, u := range res[i] {
			b.ReportMetric(float64(u.loaded), fmt.Sprintf("%s-%s-loaded-tokens", set, u.format))
			b.ReportMetric(float64(u.client), fmt.Sprintf("%s-%s-client-tokens", set, u.format))
			if u.hasHosted {
				b.ReportMetric(float64(u.hosted), fmt.Sprintf("%s-%s-hosted-tokens", set, u.format))
			}
		}
	}
}

// TestUpfrontTokensIntegration measures the npm servers of the suite the same way
// (BENCHMARKS.md). With few tools the search tool's own cost weighs more, so no target.
func TestUpfrontTokensIntegration(t *testing.T) {
	list, servers := dialSuite(t)
	var all bridge.Tools
	for _, is := range list {
		all = append(all, servers[is.id].Tools()...)
	}
	logUpfront(t, "integration servers", all, false)
}
