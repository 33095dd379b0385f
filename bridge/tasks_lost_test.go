package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// runStdioTaskServer serves the task fixture over stdio (the test binary re-executed): "slow"
// runs as a task until the process ends, "exit" ends the process at once.
func runStdioTaskServer(ext bool) int {
	fx := newTaskServer(ext)
	fx.tool("slow", "required", func(ctx context.Context, _ *fxTask) { <-ctx.Done() })
	fx.tool("huge", "required", func(_ context.Context, tk *fxTask) { tk.complete(strings.Repeat("x", 200<<10)) })
	fx.srv.AddTool(&mcp.Tool{Name: "exit", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	if err := fx.srv.Run(context.Background(), &recordingTransport{&mcp.StdioTransport{}, fx}); err != nil {
		fmt.Fprintln(os.Stderr, "task fixture:", err)
		return 1
	}
	return 0
}

// stdioTaskConfig is the stdio task fixture speaking the 2026-07-28 extension (ext) or
// 2025-11-25's tasks (pinned).
func stdioTaskConfig(t *testing.T, ext bool) bridge.ServerConfig {
	if ext {
		return stdioConfig(t, "fx", "tasks-ext")
	}
	cfg := stdioConfig(t, "fx", "tasks-2025")
	cfg.ProtocolVersion = "2025-11-25"
	return cfg
}

// A task of a stdio server whose process exited is reported as lost with it (ErrTaskLost),
// on both protocol versions: the process started since cannot know the task, so the bridge
// does not ask it (which read "unknown task … Task not found").
func TestTaskLostWithProcess(t *testing.T) {
	for _, ext := range []bool{true, false} {
		t.Run(fmt.Sprintf("ext=%v", ext), func(t *testing.T) {
			cfg := stdioTaskConfig(t, ext)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := bridge.Dial(ctx, cfg, quietOpts())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			task, err := s.StartTask(ctx, "slow", nil)
			if err != nil || task.ID == "" {
				t.Fatalf("StartTask = %+v, %v", task, err)
			}
			if _, err := s.PollTask(ctx, task.ID); err != nil {
				t.Fatalf("PollTask while the process runs: %v", err)
			}
			if _, err := s.CallTool(ctx, "exit", nil); err == nil {
				t.Fatal("the exit tool answered")
			}
			for name, op := range map[string]func() error{
				"PollTask":  func() error { _, err := s.PollTask(ctx, task.ID); return err },
				"AwaitTask": func() error { _, err := s.AwaitTask(ctx, task.ID); return err },
			} {
				err := op()
				var te *bridge.TaskError
				if !errors.Is(err, bridge.ErrTaskLost) || !errors.As(err, &te) || te.TaskID != task.ID ||
					!strings.Contains(err.Error(), "the server process that ran it exited") {
					t.Errorf("%s after the process exited: %v (want ErrTaskLost naming the task)", name, err)
				}
			}
		})
	}
}

// A task whose result is over the message limit ends in an error that names the task and the
// limit (the stdio session ends with the oversized frame, and the process that ran the task
// with it), on both protocol versions, not only a "session lost" log line.
func TestTaskResultOverLimit(t *testing.T) {
	for _, ext := range []bool{true, false} {
		t.Run(fmt.Sprintf("ext=%v", ext), func(t *testing.T) {
			cfg := stdioTaskConfig(t, ext)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			opts := quietOpts()
			opts.MaxMessageBytes = 64 << 10
			s, err := bridge.Dial(ctx, cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			task, err := s.StartTask(ctx, "huge", nil)
			if err != nil || task.ID == "" {
				t.Fatalf("StartTask = %+v, %v", task, err)
			}
			_, err = s.AwaitTask(ctx, task.ID)
			var te *bridge.TaskError
			if err == nil || !errors.As(err, &te) || te.TaskID != task.ID || !strings.Contains(err.Error(), "65536") {
				t.Errorf("AwaitTask of a result over the limit: %v (want a *TaskError naming the task and the 65536-byte limit)", err)
			}
		})
	}
}

// Input that no handler can provide (no Options.OnElicitation) is declined through
// tasks/update, as 2026-07-28 allows, and the server decides what the task does next; the
// task is not cancelled.
func TestTaskInputDeclinedWithoutHandler(t *testing.T) {
	fx := newTaskServer(true)
	fx.tool("t", "required", func(ctx context.Context, tk *fxTask) {
		ans := tk.ask(ctx, "k", &mcp.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
		tk.complete("answer: " + ans.Action)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := bridge.Dial(ctx, fx.config("fx"), quietOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, err := taskTool(t, s, "t").Handler(ctx, nil)
	if err != nil || text != "answer: decline" {
		t.Errorf("Handler = %q, %v; want the server's result after the decline", text, err)
	}
	if _, cancels, _ := fx.counts(); len(cancels) > 0 {
		t.Errorf("tasks/cancel sent for %v", cancels)
	}
}
