package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// Servers that misuse tasks: every value they send about a task is bounded, and every way
// they can misbehave ends the call with an error naming what went wrong, in bounded time.

// Poll pacing follows the server's pollInterval within bounds: 0 is raised to 250ms, a
// year is lowered to 30s, and without one the bridge backs off from 500ms.
func TestTaskPollBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		poll     any
		work     time.Duration // the task completes after this long
		maxGets  int
		wantTook time.Duration // 0: not checked
	}{
		{"zero", 0, 9900 * time.Millisecond, 41, 10 * time.Second},
		{"negative", -5, 10 * time.Second, 8, 0},
		{"a year", 365 * 24 * 3600 * 1000, 2 * time.Second, 1, 30 * time.Second},
		{"absent", nil, 10 * time.Second, 8, 0},
		{"not a number", "soon", 10 * time.Second, 8, 0},
	} {
		for _, ext := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ext=%v", tc.name, ext), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					fx := newTaskServer(ext)
					fx.poll = tc.poll
					fx.tool("slow", "required", func(ctx context.Context, tk *fxTask) {
						time.Sleep(tc.work)
						tk.complete("done")
					})
					s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					start := time.Now()
					text, err := taskTool(t, s, "slow").Handler(t.Context(), nil)
					took := time.Since(start)
					if err != nil || text != "done" {
						t.Fatalf("Handler = %q, %v", text, err)
					}
					gets, _, _ := fx.counts()
					if gets > tc.maxGets {
						t.Errorf("%d tasks/get for a %s task, want at most %d", gets, tc.work, tc.maxGets)
					}
					if tc.wantTook != 0 && took != tc.wantTook {
						t.Errorf("the call took %s, want %s", took, tc.wantTook)
					}
					if took > tc.work+maxPollInterval {
						t.Errorf("the call took %s for a %s task", took, tc.work)
					}
				})
			})
		}
	}
}

const maxPollInterval = 30 * time.Second

// Hostile task servers, each bounded and reported.
func TestTaskHostile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ext   bool
		setup func(fx *taskServer)
		opts  func(o *bridge.Options)
		want  error  // errors.Is target; nil: only the message is checked
		msg   string // the error mentions it
		// cancel says tasks/cancel must be sent (the bridge gave up on a live task).
		cancel bool
	}{
		{
			name: "answers about another task", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(context.Context, *fxTask) {})
				fx.getHook = func(_ *fxTask, m map[string]any) any { m["taskId"] = "someone-else"; return m }
			},
			want: bridge.ErrUnknownTask, msg: `tasks/get answered about task "someone-else"`, cancel: true,
		},
		{
			name: "result of another task",
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(_ context.Context, tk *fxTask) { tk.complete("secret of another call") })
				fx.relatedID = "task-99"
			},
			want: bridge.ErrUnknownTask, msg: `tasks/result answered with the result of task "task-99"`, // ours ended: nothing to cancel
		},
		{
			name: "input for a task nobody follows",
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(ctx context.Context, tk *fxTask) {
					ans := tk.ask(ctx, "k", &mcp.ElicitParams{Message: "password?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
					tk.complete("answer " + ans.Action)
				})
				fx.relatedID = "ghost"
			},
			opts: func(o *bridge.Options) {
				o.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
					panic("OnElicitation called for a task no call follows")
				}
			},
			// The server's elicitation was refused; then its result names "ghost": our task, not
			// yet seen to end, is cancelled.
			want: bridge.ErrUnknownTask, cancel: true,
		},
		{
			name: "unknown status", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(context.Context, *fxTask) {})
				fx.getHook = func(_ *fxTask, m map[string]any) any { m["status"] = "paused\x1b[31m"; return m }
			},
			msg: `unknown status "paused\x1b[31m"`, cancel: true,
		},
		{
			name: "completed without a result", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(_ context.Context, tk *fxTask) { tk.set("completed", "") })
			},
			want: bridge.ErrTaskFailed, msg: "completed without its result",
		},
		{
			name: "unusable task ID", ext: true,
			setup: func(fx *taskServer) {
				fx.newID = func(int) string { return "" }
				fx.tool("t", "required", func(context.Context, *fxTask) {})
			},
			msg: "unusable task ID",
		},
		{
			name: "oversized task ID",
			setup: func(fx *taskServer) {
				fx.newID = func(int) string { return strings.Repeat("x", 5000) }
				fx.tool("t", "required", func(context.Context, *fxTask) {})
			},
			msg: "unusable task ID",
		},
		{
			name: "input requests that never end", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(ctx context.Context, tk *fxTask) {
					for i := 0; ctx.Err() == nil; i++ {
						if tk.ask(ctx, fmt.Sprintf("k%d", i), &mcp.ElicitParams{Message: "again?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}) == nil {
							return
						}
					}
				})
			},
			opts: func(o *bridge.Options) {
				o.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept"}, nil
				}
			},
			want: bridge.ErrTaskFailed, msg: "asks for input 65 times", cancel: true,
		},
		{
			name: "input the bridge cannot give", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(ctx context.Context, tk *fxTask) {
					tk.update(func(tk *fxTask) {
						tk.status = "input_required"
						tk.input = map[string]json.RawMessage{"s": json.RawMessage(`{"method":"sampling/createMessage","params":{}}`)}
					})
				})
			},
			want: bridge.ErrTaskFailed, msg: `asks for "sampling/createMessage"`, cancel: true,
		},
		{
			name: "outlives its TTL", ext: true,
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(_ context.Context, tk *fxTask) { tk.update(func(tk *fxTask) { tk.ttl = 1000 }) })
			},
			want: bridge.ErrTaskExpired, msg: "after its TTL of 1s", cancel: true,
		},
		{
			name: "forgotten after its TTL",
			setup: func(fx *taskServer) {
				fx.tool("t", "required", func(_ context.Context, tk *fxTask) {
					tk.update(func(tk *fxTask) { tk.ttl = 2000 })
					time.Sleep(2500 * time.Millisecond)
					tk.fx.mu.Lock()
					delete(tk.fx.tasks, tk.id)
					tk.fx.mu.Unlock()
				})
			},
			want: bridge.ErrTaskExpired, msg: "Task not found",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(tc.ext)
				tc.setup(fx)
				opts := quietOpts()
				if tc.opts != nil {
					tc.opts(opts)
				}
				s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_, err = taskTool(t, s, "t").Handler(t.Context(), nil)
				if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
				}
				var se *bridge.ServerError
				if !errors.As(err, &se) {
					t.Errorf("err = %T, want a *ServerError", err)
				}
				synctest.Wait()
				if _, cancels, _ := fx.counts(); (len(cancels) > 0) != tc.cancel {
					t.Errorf("tasks/cancel sent for %v; want sent: %v", cancels, tc.cancel)
				}
			})
		})
	}
}

// A server that hands out one task ID twice is caught: the second call fails, naming the
// reuse, and the first call's task is not cancelled by it.
func TestTaskReusedID(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("ext=%v", ext), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(ext)
				fx.newID = func(int) string { return "same" }
				var n atomic.Int32
				fx.tool("t", "required", func(_ context.Context, tk *fxTask) {
					time.Sleep(2 * time.Second)
					tk.complete(fmt.Sprint("call ", n.Add(1)))
				})
				s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				tool := taskTool(t, s, "t")
				if text, err := tool.Handler(t.Context(), nil); err != nil || text != "call 1" {
					t.Fatalf("first call = %q, %v", text, err)
				}
				text, err := tool.Handler(t.Context(), nil)
				if !errors.Is(err, bridge.ErrUnknownTask) || !strings.Contains(err.Error(), "task IDs must be unique") {
					t.Errorf("second call = %q, %v; want an error naming the reused ID", text, err)
				}
				if _, cancels, _ := fx.counts(); len(cancels) > 0 {
					t.Errorf("tasks/cancel sent for %v; a reused ID may be another call's task", cancels)
				}
				time.Sleep(3 * time.Second) // the server's second task ends
				synctest.Wait()
			})
		})
	}
}

// A status message is bounded and made valid UTF-8 before it reaches callbacks.
func TestTaskStatusMessageBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newTaskServer(true)
		fx.tool("t", "required", func(_ context.Context, tk *fxTask) {
			tk.set("working", strings.Repeat("é", 10000)+"\xff")
			time.Sleep(time.Second)
			tk.complete("ok")
		})
		var longest atomic.Int64
		opts := quietOpts()
		opts.OnTaskStatus = func(_ context.Context, tk bridge.Task) {
			if n := int64(len(tk.StatusMessage)); n > longest.Load() {
				longest.Store(n)
			}
			if !utf8Valid(tk.StatusMessage) {
				t.Errorf("status message is not UTF-8")
			}
		}
		s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := taskTool(t, s, "t").Handler(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if n := longest.Load(); n == 0 || n > 4100 {
			t.Errorf("longest status message %d bytes, want at most ~4 KB", n)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// A result over Options.MaxMessageBytes ends the call naming the limit (the session is
// dropped like for any oversized message), in both versions' ways of delivering it.
func TestTaskResultOverBudget(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("ext=%v", ext), func(t *testing.T) {
			fx := newTaskServer(ext)
			fx.tool("t", "required", func(_ context.Context, tk *fxTask) {
				tk.update(func(tk *fxTask) { tk.poll = 0 })
				tk.complete(strings.Repeat("x", 1<<20))
			})
			cfg := fx.httpConfig(t, "fx")
			if !ext {
				cfg.ProtocolVersion = "2025-11-25"
			}
			opts := quietOpts()
			opts.MaxMessageBytes = 64 << 10
			s, err := bridge.Dial(t.Context(), cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = taskTool(t, s, "t").Handler(t.Context(), nil)
			if err == nil || !strings.Contains(err.Error(), "MaxMessageBytes") {
				t.Errorf("err = %v, want the message limit named", err)
			}
		})
	}
}

// Detached tasks: a host starts a task, keeps its ID, and awaits it later from another
// process (here a second Dial of the same HTTP server after the first was closed); polls
// and cancels go by ID, and carry the task ID in Mcp-Name for routing.
func TestTaskDetachedAcrossRestart(t *testing.T) {
	fx := newTaskServer(true)
	release := make(chan struct{})
	fx.tool("job", "", func(_ context.Context, tk *fxTask) {
		tk.update(func(tk *fxTask) { tk.poll = 0 })
		<-release
		tk.complete("job output")
	})
	cfg := fx.httpConfig(t, "fx")
	first, err := bridge.Dial(t.Context(), cfg, quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	task, err := first.StartTask(t.Context(), "job", json.RawMessage(`{"n":1}`))
	if err != nil || task.ID == "" || task.Status != bridge.TaskWorking || task.Tool != "job" || task.Server != "fx" {
		t.Fatalf("StartTask = %+v, %v", task, err)
	}
	saved, _ := json.Marshal(task)
	first.Close()

	second, err := bridge.Dial(t.Context(), cfg, quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	var kept bridge.Task
	if err := json.Unmarshal(saved, &kept); err != nil {
		t.Fatal(err)
	}
	polled, err := second.PollTask(t.Context(), kept.ID)
	if err != nil || polled.Status != bridge.TaskWorking {
		t.Errorf("PollTask = %+v, %v; want working", polled, err)
	}
	close(release)
	res, err := second.AwaitTask(t.Context(), kept.ID)
	if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "job output" {
		t.Fatalf("AwaitTask = %+v, %v", res, err)
	}
	if _, err := second.AwaitTask(t.Context(), "no-such-task"); !errors.Is(err, bridge.ErrUnknownTask) {
		t.Errorf("AwaitTask(unknown) = %v, want ErrUnknownTask", err)
	}
	if _, err := second.PollTask(t.Context(), "bad\nid"); !errors.Is(err, bridge.ErrUnknownTask) {
		t.Errorf("PollTask(bad id) = %v, want ErrUnknownTask without asking the server", err)
	}
	if err := second.CancelTask(t.Context(), kept.ID); err != nil {
		t.Errorf("CancelTask = %v", err)
	}
	fx.mu.Lock()
	names := slices.Clone(fx.nameHeaders)
	fx.mu.Unlock()
	if len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return n != kept.ID && n != "no-such-task" }) {
		t.Errorf("Mcp-Name of tasks/* requests = %q, want the task ID", names)
	}
}

// StartTask under 2025-11-25 refuses tools that do not run as tasks, and a server answering
// without a task under 2026-07-28 gives the result at once.
func TestStartTaskRefusals(t *testing.T) {
	fx := newTaskServer(false)
	fx.tool("plain", "", func(_ context.Context, tk *fxTask) { tk.complete("now") })
	fx.tool("forbidden", "forbidden", func(_ context.Context, tk *fxTask) { tk.complete("now") })
	s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"plain", "forbidden"} {
		if _, err := s.StartTask(t.Context(), name, nil); err == nil || !strings.Contains(err.Error(), "execution.taskSupport") {
			t.Errorf("StartTask(%s) = %v, want a refusal naming execution.taskSupport", name, err)
		}
	}

	ext := newTaskServer(true)
	ext.srv.AddTool(&mcp.Tool{Name: "quick", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "at once"}}}, nil
	})
	s2, err := bridge.Dial(t.Context(), ext.config("ext"), quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	task, err := s2.StartTask(t.Context(), "quick", nil)
	if err != nil || task.ID != "" || task.Status != bridge.TaskCompleted || task.Result == nil {
		t.Errorf("StartTask(quick) = %+v, %v; want no task and the result", task, err)
	}
}

// A server restarted on a redial may count its task IDs from the start again: that is not a
// reused ID (the old tasks died with the old process).
func TestTaskIDsAfterRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newTaskServer(true)
		fx.newID = func(int) string { return "task-1" } // as a fresh process would
		fx.tool("t", "required", func(_ context.Context, tk *fxTask) { tk.complete("ok") })
		s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		tool := taskTool(t, s, "t")
		if _, err := tool.Handler(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		for ss := range fx.srv.Sessions() { // the server goes away; the next call redials
			_ = ss.Close()
		}
		synctest.Wait()
		if text, err := tool.Handler(t.Context(), nil); err != nil || text != "ok" {
			t.Errorf("after a redial: %q, %v; want the new session's task-1 accepted", text, err)
		}
		if _, err := tool.Handler(t.Context(), nil); !errors.Is(err, bridge.ErrUnknownTask) {
			t.Errorf("task-1 again on the same session: %v, want it caught as reused", err)
		}
	})
}

// A task handle may already say input_required (it carries no inputRequests): the bridge
// polls for them rather than failing; a server that never sends them is bounded by the task
// timeout.
func TestTaskInputRequiredAtCreation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newTaskServer(true)
		started := make(chan struct{})
		fx.tool("t", "required", func(ctx context.Context, tk *fxTask) {
			<-started
			if ans := tk.ask(ctx, "k", &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)}); ans != nil {
				tk.complete("hi " + ans.Content["n"].(string))
			}
		})
		opts := quietOpts()
		opts.OnElicitation = func(context.Context, *bridge.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": "Ada"}}, nil
		}
		s, err := bridge.Dial(t.Context(), fx.config("fx"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// The handle says input_required before the requests exist.
		go func() { time.Sleep(10 * time.Millisecond); close(started) }()
		var patched atomic.Bool
		fx.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if r, ok := res.(*rawJSON); ok && method == "tools/call" {
					var m map[string]any
					_ = json.Unmarshal(r.b, &m)
					m["status"] = "input_required"
					patched.Store(true)
					return raw(m), nil
				}
				return res, err
			}
		})
		text, err := taskTool(t, s, "t").Handler(t.Context(), nil)
		if err != nil || text != "hi Ada" {
			t.Errorf("Handler = %q, %v; want the task to complete after its input", text, err)
		}
		if !patched.Load() {
			t.Error("the task handle did not say input_required; the test tests nothing")
		}
	})
}

// A task handle may already say the task ended (extension): the handle carries no outcome,
// so the bridge fetches it with tasks/get at once.
func TestTaskEndedAtCreation(t *testing.T) {
	for _, tc := range []struct {
		status string
		work   func(context.Context, *fxTask)
		check  func(text string, err error) bool
	}{
		{"completed", func(_ context.Context, tk *fxTask) { tk.complete("done early") },
			func(text string, err error) bool { return err == nil && text == "done early" }},
		{"failed", func(_ context.Context, tk *fxTask) { tk.fail(-32603, "boom") },
			func(_ string, err error) bool {
				var je *jsonrpc.Error
				return errors.Is(err, bridge.ErrTaskFailed) && errors.As(err, &je) && je.Code == -32603
			}},
	} {
		t.Run(tc.status, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fx := newTaskServer(true)
				fx.tool("t", "required", tc.work)
				fx.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						res, err := next(ctx, method, req)
						if r, ok := res.(*rawJSON); ok && method == "tools/call" {
							time.Sleep(10 * time.Millisecond) // the work is done
							var m map[string]any
							_ = json.Unmarshal(r.b, &m)
							m["status"] = tc.status
							return raw(m), nil
						}
						return res, err
					}
				})
				s, err := bridge.Dial(t.Context(), fx.config("fx"), quietOpts())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				start := time.Now()
				text, err := taskTool(t, s, "t").Handler(t.Context(), nil)
				if !tc.check(text, err) {
					t.Errorf("Handler = %q, %v", text, err)
				}
				if d := time.Since(start); d > 20*time.Millisecond {
					t.Errorf("the outcome took %s: it should be fetched at once, not after a poll interval", d)
				}
			})
		})
	}
}
