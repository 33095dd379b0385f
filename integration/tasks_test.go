package integration

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
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
				_, err := research.Handler(bridge.WithProgress(cctx, func(p bridge.Progress) {
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

func (r *statusRecorder) add(p bridge.Progress) {
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
