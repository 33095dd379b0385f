package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// Tasks against go-sdk servers that speak them (tasks_fixture_test.go), in both versions'
// shapes. Timing runs in synctest bubbles: poll schedules are exact and nothing waits on the
// wall clock.

// taskTool returns the model-visible tool of a one-server set by its remote name.
func taskTool(t *testing.T, s *bridge.Server, remote string) bridge.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.RemoteName == remote {
			return tl
		}
	}
	t.Fatalf("tool %q is not offered; status: %+v", remote, s.Status())
	return bridge.Tool{}
}

// statusLog collects the task statuses a WithProgress callback saw.
type statusLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *statusLog) fn(_ context.Context, p bridge.Progress) {
	if p.TaskID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, string(p.Status)+":"+p.Message)
}

func (l *statusLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

func research(steps ...string) func(context.Context, *fxTask) {
	return func(ctx context.Context, t *fxTask) {
		for _, s := range steps {
			t.set("working", s)
			time.Sleep(1200 * time.Millisecond)
		}
		t.complete("report on " + string(t.args))
	}
}

// A task tool is offered to the model and its Handler runs the whole lifecycle: create,
// poll at the server's pollInterval, fetch the result, flatten it; statuses reach
// WithProgress and OnTaskStatus. Both versions.
func TestTaskLifecycle(t *testing.T) {
	for _, ext := range []bool{false, true} {
		name := "2025-11-25"
		if ext {
			name = "2026-07-28"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.tool("research", "required", research("Gathering sources", "Synthesizing"))
				var hookMu sync.Mutex
				var hooked []bridge.Task
				opts := quietOpts()
				opts.CallTimeout = 2 * time.Second // shorter than the task: each request, not the task
				opts.OnTaskStatus = func(ctx context.Context, tk bridge.Task) {
					hookMu.Lock()
					hooked = append(hooked, tk)
					hookMu.Unlock()
				}
				s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				st := s.Status()
				if len(st.Problems) != 0 {
					t.Errorf("problems = %v, want none", st.Problems)
				}
				if want := []bridge.TaskTool{{Tool: "research", Support: "required"}}; !slices.Equal(st.TaskTools, want) {
					t.Errorf("TaskTools = %v, want %v", st.TaskTools, want)
				}
				if st.Tasks == "" {
					t.Errorf("Status().Tasks is empty; the server offers tasks")
				}
				tool := taskTool(t, s, "research")
				var log statusLog
				start := time.Now()
				text, err := tool.Handler(bridge.WithProgress(t.Context(), log.fn), json.RawMessage(`{"topic":"go"}`))
				if err != nil {
					t.Fatalf("Handler: %v", err)
				}
				if want := `report on {"topic":"go"}`; text != want {
					t.Errorf("text = %q, want %q", text, want)
				}
				// A call that may become a task takes the direct path like any other: the
				// handle is kept by the call's tap there (not a detour through go-sdk).
				if direct, sdk := s.CallPaths(); direct != 1 || sdk != 0 {
					t.Errorf("tools/call paths: %d direct, %d through go-sdk; want the direct path", direct, sdk)
				}
				// Two steps of 1.2s, polled every second (the server's pollInterval): done at 3s.
				if d := time.Since(start); d != 3*time.Second {
					t.Errorf("the call took %s, want 3s (polls every 1s)", d)
				}
				synctest.Wait()
				seen := log.list()
				for _, want := range []string{"working:Synthesizing", "completed:Synthesizing"} {
					if !slices.Contains(seen, want) {
						t.Errorf("statuses = %q, want %q among them", seen, want)
					}
				}
				hookMu.Lock()
				if len(hooked) == 0 || hooked[len(hooked)-1].Status != bridge.TaskCompleted || hooked[0].Tool != "research" || hooked[0].Server != "fx" {
					t.Errorf("OnTaskStatus saw %+v", hooked)
				}
				hookMu.Unlock()
				if !ext {
					var p struct {
						Task struct {
							TTL int64 `json:"ttl"`
						} `json:"task"`
					}
					fx.mu.Lock()
					_ = json.Unmarshal(fx.callParams[0], &p)
					fx.mu.Unlock()
					if p.Task.TTL != bridge.DefaultTaskTimeout.Milliseconds() {
						t.Errorf("tools/call task.ttl = %d, want the task timeout %d", p.Task.TTL, bridge.DefaultTaskTimeout.Milliseconds())
					}
				} else {
					fx.mu.Lock()
					declared := slices.Contains(fx.declaredExt, true)
					fx.mu.Unlock()
					if !declared {
						t.Error("tools/call did not declare the tasks extension in _meta clientCapabilities")
					}
				}
			})
		})
	}
}

// input_required is answered through OnElicitation: under 2025-11-25 the request comes
// through tasks/result, under the extension through inputRequests and tasks/update. The
// request names the task, and runs under the calling Handler's context.
func TestTaskInputRequired(t *testing.T) {
	type ctxKey struct{}
	for _, ext := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.tool("research", "required", func(ctx context.Context, tk *fxTask) {
					tk.set("working", "Gathering")
					time.Sleep(time.Second)
					ans := tk.ask(ctx, "clarify", &mcp.ElicitParams{
						Message:         "Which python?",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"interpretation":{"type":"string"},"depth":{"type":"string","default":"deep"}},"required":["interpretation"]}`),
					})
					if ans == nil {
						return
					}
					tk.complete(ans.Action + " " + ans.Content["interpretation"].(string) + " " + ans.Content["depth"].(string))
				})
				var mu sync.Mutex
				var asked []*bridge.ElicitRequest
				var fromCaller []bool
				opts := quietOpts()
				opts.OnElicitation = func(ctx context.Context, req *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req)
					fromCaller = append(fromCaller, ctx.Value(ctxKey{}) == "caller")
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
				}
				s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx := context.WithValue(t.Context(), ctxKey{}, "caller")
				text, err := taskTool(t, s, "research").Handler(ctx, nil)
				if err != nil {
					t.Fatalf("Handler: %v", err)
				}
				if want := "accept snake deep"; text != want {
					t.Errorf("text = %q, want %q (answer and SEP-1034 default)", text, want)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(asked) != 1 || asked[0].TaskID != "task-1" || asked[0].Params.Message != "Which python?" || !fromCaller[0] {
					t.Errorf("OnElicitation got %d requests (%+v), from the caller's ctx: %v; want one for task-1 under the caller's ctx", len(asked), asked, fromCaller)
				}
				if _, _, updates := fx.counts(); ext && updates != 1 {
					t.Errorf("tasks/update sent %d times, want 1 (each input request answered once)", updates)
				}
			})
		})
	}
}

// Cancelling the caller's ctx cancels the task on the server, and a task that never ends is
// bounded by the task timeout (then cancelled too).
func TestTaskCancelAndTimeout(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.tool("forever", "required", func(ctx context.Context, tk *fxTask) { tk.set("working", "still at it") })
				opts := quietOpts()
				opts.TaskTimeout = time.Minute
				s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				tool := taskTool(t, s, "forever")

				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(5*time.Second, cancel)
				_, err = tool.Handler(ctx, nil)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("after cancel: err = %v, want context.Canceled", err)
				}
				if _, cancels, _ := fx.counts(); !slices.Equal(cancels, []string{"task-1"}) {
					t.Errorf("tasks/cancel sent for %v, want [task-1]", cancels)
				}

				start := time.Now()
				_, err = tool.Handler(t.Context(), nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("never-ending task: err = %v, want DeadlineExceeded", err)
				}
				if d := time.Since(start); d != time.Minute {
					t.Errorf("never-ending task returned after %s, want the task timeout (1m)", d)
				}
				if _, cancels, _ := fx.counts(); !slices.Equal(cancels, []string{"task-1", "task-2"}) {
					t.Errorf("tasks/cancel sent for %v, want [task-1 task-2]", cancels)
				}
			})
		})
	}
}

// Tasks that end without a result give typed errors; a tool's own isError stays a result.
func TestTaskErrors(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.tool("fails", "required", func(ctx context.Context, tk *fxTask) { tk.fail(-32603, "rate limit exceeded") })
				fx.tool("cancelled", "required", func(ctx context.Context, tk *fxTask) {
					tk.update(func(tk *fxTask) { tk.status, tk.msg = "cancelled", "operator stopped it" })
				})
				fx.tool("iserror", "required", func(ctx context.Context, tk *fxTask) {
					res, _ := json.Marshal(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad input"}}})
					status := "completed"
					if !ext {
						status = "failed" // 2025-11-25: an isError result fails the task
					}
					tk.update(func(tk *fxTask) { tk.status, tk.result = status, res })
				})
				fx.tool("vanishes", "required", func(ctx context.Context, tk *fxTask) {
					tk.fx.mu.Lock()
					delete(tk.fx.tasks, tk.id)
					tk.fx.mu.Unlock()
				})
				s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for _, tc := range []struct {
					tool string
					kind error
					want string
				}{
					{"fails", bridge.ErrTaskFailed, "rate limit exceeded"},
					{"cancelled", bridge.ErrTaskCancelled, "operator stopped it"},
					{"vanishes", bridge.ErrUnknownTask, "Task not found"},
				} {
					_, err := taskTool(t, s, tc.tool).Handler(t.Context(), nil)
					var te *bridge.TaskError
					if !errors.Is(err, tc.kind) || !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("%s: err = %v, want a *TaskError wrapping %v mentioning %q", tc.tool, err, tc.kind, tc.want)
					}
					var se *bridge.ServerError
					if !errors.As(err, &se) || se.Server != "fx" {
						t.Errorf("%s: err = %v, want it in a *ServerError naming the server", tc.tool, err)
					}
					if tc.tool == "fails" {
						var je *jsonrpc.Error
						if !errors.As(err, &je) || je.Code != -32603 {
							t.Errorf("fails: err = %v, want the server's JSON-RPC error -32603 as cause", err)
						}
					}
				}
				text, err := taskTool(t, s, "iserror").Handler(t.Context(), nil)
				var toolErr *results.ToolError
				if !errors.As(err, &toolErr) || text != "bad input" {
					t.Errorf("isError task: text %q, err %v; want the result as a *results.ToolError", text, err)
				}
			})
		})
	}
}

func quietTaskOpts(mode bridge.TaskMode) *bridge.Options {
	o := quietOpts()
	o.Tasks = mode
	return o
}

// The task modes: auto runs required tools as tasks and optional ones plainly; always runs
// optional ones as tasks too; never skips required tools and declares nothing.
func TestTaskModes(t *testing.T) {
	for _, tc := range []struct {
		mode         bridge.TaskMode
		ext          bool
		wantRequired bool // the required tool is offered
		wantOptTask  bool // the optional tool's call asks for a task
	}{
		{bridge.TasksAuto, false, true, false},
		{bridge.TasksAlways, false, true, true},
		{bridge.TasksNever, false, false, false},
		{bridge.TasksNever, true, false, false},
	} {
		t.Run(string(tc.mode)+map[bool]string{false: "/2025", true: "/2026"}[tc.ext], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(tc.ext)
				fx.tool("required", "required", research("a"))
				fx.tool("optional", "optional", research("b"))
				s, err := bridge.Dial(t.Context(), fx.config("fx"), quietTaskOpts(tc.mode))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				offered := slices.ContainsFunc(s.Tools(), func(tl bridge.Tool) bool { return tl.RemoteName == "required" })
				if offered != tc.wantRequired {
					t.Errorf("required tool offered = %v, want %v (problems %v)", offered, tc.wantRequired, s.Status().Problems)
				}
				if !tc.wantRequired && !slices.ContainsFunc(s.Status().Problems, func(p bridge.ToolProblem) bool {
					return p.Tool == "required" && p.Skipped && strings.Contains(p.Problem, "tasks: never")
				}) {
					t.Errorf("problems = %v, want the required tool skipped naming tasks: never", s.Status().Problems)
				}
				if _, err := taskTool(t, s, "optional").Handler(t.Context(), nil); err != nil {
					t.Fatalf("optional: %v", err)
				}
				fx.mu.Lock()
				defer fx.mu.Unlock()
				asked := fx.lastCallAsksTask()
				if tc.ext {
					asked = fx.declaredExt[len(fx.declaredExt)-1]
				}
				if asked != tc.wantOptTask {
					t.Errorf("optional tool's call asked for a task: %v, want %v", asked, tc.wantOptTask)
				}
			})
		})
	}
}

// A server whose tasks capability lacks tools/call cannot run a required tool: it is
// skipped, saying why.
func TestTaskRequiredWithoutCapability(t *testing.T) {
	fx := newTaskServer(false)
	fx.caps2025 = `{"list":{}}`
	fx.tool("required", "required", research("a"))
	s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps := s.Status().Problems
	if len(ps) != 1 || !ps[0].Skipped || !strings.Contains(ps[0].Problem, "capabilities.tasks.requests.tools.call") {
		t.Errorf("problems = %+v, want the required tool skipped for the missing capability", ps)
	}
}

var _ = slog.LevelDebug
