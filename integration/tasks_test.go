package integration

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/integration/internal/browsertest"
	"github.com/ttalk/mcpbridge/internal/serve"
	"github.com/ttalk/mcpbridge/results"
)

// TestEverythingTasks runs server-everything's simulate-research-query, a tool that only
// runs as an MCP task (execution.taskSupport "required", protocol 2025-11-25), through the
// bridge over stdio and Streamable HTTP: the whole lifecycle in a Handler, input_required
// answered through OnElicitation (ambiguous: true) or left out when the bridge cannot ask
// (no OnElicitation: the server then does not ask), cancellation, and a detached task
// awaited by ID.
func TestEverythingTasks(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	httpBase := startHTTPServer(t, s, pkgEverything, "streamableHttp")
	for _, tc := range []struct {
		name string
		cfg  func(id string) bridge.ServerConfig
	}{
		{"stdio", func(id string) bridge.ServerConfig { return s.stdio(id, pkgEverything, "stdio") }},
		{"http", func(id string) bridge.ServerConfig {
			return bridge.ServerConfig{ID: id, Type: bridge.TypeHTTP, URL: httpBase + "/mcp"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []*bridge.ElicitRequest
			withInput := connect(t, ctx, []bridge.ServerConfig{tc.cfg("everything")}, &bridge.Options{
				OnElicitation: func(ctx context.Context, req *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
				},
			})
			t.Cleanup(func() { withInput.Close() })
			without := connect(t, ctx, []bridge.ServerConfig{tc.cfg("plain")}, nil)
			t.Cleanup(func() { without.Close() })

			srv, _ := withInput.Lookup("everything")
			st := srv.Status()
			if !slices.Contains(st.TaskTools, bridge.TaskTool{Tool: "simulate-research-query", Support: "required"}) || st.Tasks == "" {
				t.Errorf("status: Tasks %q, TaskTools %v; want the research tool listed as a required task tool", st.Tasks, st.TaskTools)
			}
			for _, p := range st.Problems {
				if p.Skipped {
					t.Errorf("tool skipped: %+v", p)
				}
			}
			research := findTool(t, withInput.Tools(), "everything", "simulate-research-query")

			t.Run("plain", func(t *testing.T) {
				t.Parallel()
				var statuses statusRecorder
				text, err := findTool(t, without.Tools(), "plain", "simulate-research-query").Handler(
					bridge.WithProgress(ctx, statuses.add), json.RawMessage(`{"topic":"go"}`))
				if err != nil {
					t.Fatalf("Handler: %v", err)
				}
				if !strings.Contains(text, "# Research Report: go") || !strings.Contains(text, "`working` → `completed`") {
					t.Errorf("text = %.300q, want the research report of a task that ran working → completed", text)
				}
				got := statuses.list()
				if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "working:") && strings.Contains(s, "...") }) ||
					!slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "completed") }) {
					t.Errorf("statuses = %q, want working with the server's stage messages, then completed", got)
				}
			})

			t.Run("ambiguous answered", func(t *testing.T) {
				t.Parallel()
				text, err := research.Handler(ctx, json.RawMessage(`{"topic":"python","ambiguous":true}`))
				if err != nil {
					t.Fatalf("Handler: %v", err)
				}
				if !strings.Contains(text, "**Clarification**: snake") || !strings.Contains(text, "`input_required`") {
					t.Errorf("text = %.400q, want the report with the clarification given through OnElicitation", text)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 || asked[0].TaskID == "" || !strings.Contains(asked[0].Params.Message, "python") {
					t.Errorf("OnElicitation saw %d requests %+v, want one naming its task", len(asked), asked)
				}
			})

			t.Run("ambiguous without OnElicitation", func(t *testing.T) {
				t.Parallel()
				text, err := findTool(t, without.Tools(), "plain", "simulate-research-query").Handler(ctx, json.RawMessage(`{"topic":"python","ambiguous":true}`))
				if err != nil || !strings.Contains(text, "# Research Report: python") || strings.Contains(text, "Clarification") {
					t.Errorf("text %.200q, err %v; want a report without clarification (the bridge declared no elicitation)", text, err)
				}
			})

			t.Run("cancel", func(t *testing.T) {
				t.Parallel()
				cctx, cancel := context.WithCancel(ctx)
				var once sync.Once
				var taskID string
				_, err := research.Handler(bridge.WithProgress(cctx, func(_ context.Context, p bridge.Progress) {
					if p.TaskID != "" && p.Status == bridge.TaskWorking {
						once.Do(func() { taskID = p.TaskID; cancel() })
					}
				}), json.RawMessage(`{"topic":"rust"}`))
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				task, err := srv.PollTask(ctx, taskID)
				if err != nil || task.Status != bridge.TaskCancelled {
					t.Errorf("PollTask after cancel = %+v, %v; want status cancelled (tasks/cancel sent)", task, err)
				}
			})

			t.Run("detached", func(t *testing.T) {
				t.Parallel()
				task, err := srv.StartTask(ctx, "simulate-research-query", json.RawMessage(`{"topic":"zig"}`))
				if err != nil || task.ID == "" || task.Status != bridge.TaskWorking {
					t.Fatalf("StartTask = %+v, %v; want a working task with an ID", task, err)
				}
				b, _ := json.Marshal(task) // what a host persists
				var kept bridge.Task
				if err := json.Unmarshal(b, &kept); err != nil || kept.ID != task.ID {
					t.Fatalf("task does not survive JSON: %s: %v", b, err)
				}
				res, err := srv.AwaitTask(ctx, kept.ID)
				if err != nil {
					t.Fatalf("AwaitTask: %v", err)
				}
				text, err := results.Flatten(res, nil)
				if err != nil || !strings.Contains(text, "# Research Report: zig") {
					t.Errorf("awaited result %.200q, %v; want the report", text, err)
				}
				if err := srv.CancelTask(ctx, kept.ID); err == nil {
					t.Error("CancelTask of a completed task succeeded; the server must refuse it (2025-11-25)")
				}
			})
		})
	}
}

// statusRecorder keeps "status:message" of every task status a WithProgress callback saw.
type statusRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *statusRecorder) add(_ context.Context, p bridge.Progress) {
	if p.TaskID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, string(p.Status)+":"+p.Message)
}

func (r *statusRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// TestServeTask runs simulate-research-query from mcpbridge serve's page in headless
// Chromium: the task's status shows while it runs, its request for clarification
// (input_required, ambiguous: true) is answered in a form on the page, the report comes
// back; a second call is stopped from the page and the task is cancelled on the server.
func TestServeTask(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	calls := serve.NewCalls()
	set := connect(t, ctx, []bridge.ServerConfig{s.stdio("everything", pkgEverything, "stdio")}, &bridge.Options{OnElicitation: calls.Elicit})
	t.Cleanup(func() { set.Close() })
	h, err := serve.Listen(serve.Options{Set: set, Version: "integration", Logger: testLogger(t), Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(sctx) }()
	t.Cleanup(func() { stop(); <-served })

	b := browsertest.New(t)
	browsertest.Do(t, b, "open", chromedp.Navigate(h.URL()))
	browsertest.Poll(t, b, "tool list", `document.querySelector('[data-tool="simulate-research-query"]') !== null`)
	browsertest.Do(t, b, "pick the research tool", chromedp.Click(chromedp.CSS(`[data-tool="simulate-research-query"]`)))
	browsertest.Poll(t, b, "form", `document.querySelector("#f-0") !== null && document.querySelector("#f-1") !== null`)
	browsertest.Do(t, b, "call, ambiguous", chromedp.SetValue(chromedp.CSS(`#f-0`), "python"), chromedp.SetValue(chromedp.CSS(`#f-1`), "true"),
		chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, b, "request for clarification", `(document.querySelector("#input-message")||{}).textContent?.includes("python")`)
	browsertest.Poll(t, b, "task status", `document.querySelector("#call-lines").textContent.includes("input_required")`)
	browsertest.Screenshot(t, b, "everything-task-input")
	// The interpretation is a titled choice: (choose), programming, snake, comedy.
	browsertest.Do(t, b, "answer snake", chromedp.SetValue(chromedp.CSS(`#e-0`), "1"), chromedp.Click(chromedp.CSS(`#input-accept`)))
	browsertest.Poll(t, b, "report", `(document.querySelector("#model-text")||{}).textContent?.includes("**Clarification**: snake")`)

	browsertest.Do(t, b, "call again", chromedp.SetValue(chromedp.CSS(`#f-0`), "rust"), chromedp.SetValue(chromedp.CSS(`#f-1`), ""),
		chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, b, "running", `(document.querySelector("#call-lines")||{}).textContent?.includes("working")`)
	lines := browsertest.Eval[string](t, b, `document.querySelector("#call-lines").textContent`)
	browsertest.Do(t, b, "stop", chromedp.Click(chromedp.CSS(`#stop-call`)))
	browsertest.Poll(t, b, "stopped", `document.querySelector("#call-status").textContent.startsWith("stopped")`)
	id := strings.SplitN(lines, `"`, 3)[1] // `task "<id>": working: ...`
	srv, _ := set.Lookup("everything")
	deadline := time.Now().Add(30 * time.Second)
	for {
		task, err := srv.PollTask(ctx, id)
		if err == nil && task.Status == bridge.TaskCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %q after Stop: %+v, %v; want cancelled", id, task, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the server's task state; bounded by the deadline
	}
}
