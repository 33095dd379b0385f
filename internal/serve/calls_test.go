package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/browsertest"
	"github.com/ttalk/mcpbridge/internal/serve"
)

// askServer is a go-sdk server with one tool, "greet-later", that runs as an MCP task (the
// 2026-07-28 tasks extension, spoken through custom methods): the task reports "looking",
// then asks for a name (input_required) and completes with a greeting once answered.
func askServer() *mcp.Server {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/tasks", map[string]any{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	srv.AddTool(&mcp.Tool{Name: "greet-later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no task asked for"}}}, nil
		})
	var mu sync.Mutex
	polls, name := 0, ""
	task := func(status, msg string) map[string]any {
		return map[string]any{"taskId": "greet-1", "status": status, "statusMessage": msg, "createdAt": "2026-01-01T00:00:00Z",
			"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": nil, "pollIntervalMs": 50}
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			m := task("working", "queued")
			m["resultType"] = "task"
			return rawResult(m), nil
		}
	})
	type params struct {
		mcp.ParamsBase
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/get", func(context.Context, *mcp.ServerSession, *params) (*jsonBody, error) {
		mu.Lock()
		defer mu.Unlock()
		polls++
		switch {
		case polls == 1:
			return rawResult(task("working", "looking")), nil
		case name == "":
			m := task("input_required", "who is it?")
			m["inputRequests"] = map[string]any{"who": map[string]any{"method": "elicitation/create", "params": map[string]any{
				"mode": "form", "message": "Whom shall I greet?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
			}}}
			return rawResult(m), nil
		}
		m := task("completed", "done")
		m["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello " + name}}}
		return rawResult(m), nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/update", func(_ context.Context, _ *mcp.ServerSession, p *params) (*jsonBody, error) {
		var ans struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		_ = json.Unmarshal(p.InputResponses["who"], &ans)
		mu.Lock()
		name = ans.Action + ":" + ans.Content.Name
		mu.Unlock()
		return rawResult(map[string]any{}), nil
	})
	return srv
}

type jsonBody struct {
	mcp.ResultBase
	b []byte
}

func (j *jsonBody) MarshalJSON() ([]byte, error) { return j.b, nil }

func rawResult(v any) *jsonBody {
	b, _ := json.Marshal(v)
	return &jsonBody{b: b}
}

// startAskHost serves askServer with the page following calls (as mcpbridge serve does).
func startAskHost(t *testing.T) *serve.Host {
	t.Helper()
	srv := askServer()
	calls := serve.NewCalls()
	cfg := bridge.ServerConfig{ID: "ask", InProcess: func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
	set, err := bridge.Connect(t.Context(), []bridge.ServerConfig{cfg}, &bridge.Options{Logger: slog.New(slog.DiscardHandler), OnElicitation: calls.Elicit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	h, err := serve.Listen(serve.Options{Set: set, Calls: calls, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(sctx) }()
	t.Cleanup(func() { stop(); <-done })
	return h
}

// The page follows a call that runs as an MCP task: GET /api/calls/{id} shows the task's
// status lines and its request for input, POST /api/calls/{id}/input answers it, and the
// call then completes with what the answer made. Unknown calls and answers are refused.
func TestCallsFollowTask(t *testing.T) {
	h := startAskHost(t)
	hdr := map[string]string{"Cookie": "mcpbridge_token_" + h.Origin()[strings.LastIndex(h.Origin(), ":")+1:] + "=" + token(h), "Content-Type": "application/json"}

	result := make(chan string, 1)
	go func() { // not the test goroutine: no t.Fatal here
		req, _ := http.NewRequestWithContext(t.Context(), "POST", h.Origin()+"/api/call",
			strings.NewReader(`{"server":"ask","tool":"greet-later","arguments":{},"callId":"call-1"}`))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			result <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		result <- string(b)
	}()
	var view struct {
		Lines []string
		Input *struct{ ID, TaskID, Mode, Message string }
	}
	deadline := time.Now().Add(30 * time.Second)
	for view.Input == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no request for input shown; last view %+v", view)
		}
		time.Sleep(20 * time.Millisecond) // polling the page's API, as the page does; bounded by the deadline
		resp, body := send(t, "GET", h.Origin()+"/api/calls/call-1", hdr, "")
		if resp.StatusCode == 200 {
			_ = json.Unmarshal([]byte(body), &view)
		}
	}
	if view.Input.TaskID != "greet-1" || view.Input.Message != "Whom shall I greet?" || view.Input.Mode != "form" {
		t.Errorf("input = %+v", view.Input)
	}
	if !strings.Contains(strings.Join(view.Lines, "\n"), `task "greet-1": working: looking`) {
		t.Errorf("lines = %q, want the task's status", view.Lines)
	}
	for _, bad := range []struct{ path, body string }{
		{"/api/calls/call-1/input", `{"input":"999","action":"accept"}`},
		{"/api/calls/nope/input", `{"input":"` + view.Input.ID + `","action":"accept"}`},
		{"/api/calls/call-1/input", `{"input":"` + view.Input.ID + `","action":"maybe"}`},
	} {
		if resp, body := send(t, "POST", h.Origin()+bad.path, hdr, bad.body); resp.StatusCode == 200 {
			t.Errorf("POST %s %s = 200 %s, want refused", bad.path, bad.body, body)
		}
	}
	resp, body := send(t, "POST", h.Origin()+"/api/calls/call-1/input", hdr, `{"input":"`+view.Input.ID+`","action":"accept","content":{"name":"Ada"}}`)
	if resp.StatusCode != 200 {
		t.Fatalf("answer = %d %s", resp.StatusCode, body)
	}
	var r struct{ ModelText, Error string }
	_ = json.Unmarshal([]byte(<-result), &r)
	if r.ModelText != "hello accept:Ada" || r.Error != "" {
		t.Errorf("call = %+v, want the greeting made from the answer", r)
	}
	if resp, _ := send(t, "GET", h.Origin()+"/api/calls/call-1", hdr, ""); resp.StatusCode != 404 {
		t.Errorf("a finished call is still followed: %d", resp.StatusCode)
	}
}

// In the browser: a tool that runs as a task shows its status while it runs and a form for
// the server's request for input; answering it completes the call.
func TestBrowserTaskInput(t *testing.T) {
	ctx := browsertest.New(t)
	h := startAskHost(t)
	browsertest.Do(t, ctx, "open", chromedp.Navigate(h.URL()))
	browsertest.Poll(t, ctx, "server list", `document.querySelectorAll(".server").length === 1`)
	browsertest.Do(t, ctx, "pick greet-later", chromedp.Click(chromedp.CSS(`[data-tool="greet-later"]`)))
	browsertest.Poll(t, ctx, "call button", `document.querySelector("#call") !== null`)
	browsertest.Do(t, ctx, "call", chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, ctx, "request for input", `(document.querySelector("#input-message")||{}).textContent === "Whom shall I greet?"`)
	browsertest.Poll(t, ctx, "task status", `document.querySelector("#call-lines").textContent.includes('task "greet-1": input_required: who is it?')`)
	browsertest.Screenshot(t, ctx, "task-input")
	browsertest.Do(t, ctx, "answer", chromedp.SetValue(chromedp.CSS(`#e-0`), "Ada"), chromedp.Click(chromedp.CSS(`#input-accept`)))
	browsertest.Poll(t, ctx, "result", `(document.querySelector("#model-text")||{}).textContent === "hello accept:Ada"`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll(".input-request").length`); n != 0 {
		t.Errorf("%d input forms left after the call", n)
	}
}
