package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelFileEnv names the file the "tasks" server writes the ID of a cancelled task to.
const cancelFileEnv = "MCPBRIDGE_CLI_TEST_CANCELFILE"

// serveTasks serves one tool, research, that runs as an MCP task (the 2026-07-28 tasks
// extension, as a go-sdk server speaks it through custom methods): it works for three polls
// ("step 1".."step 3") and completes; its topic "forever" never completes. tasks/cancel
// records the task ID in $MCPBRIDGE_CLI_TEST_CANCELFILE.
func serveTasks() int {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/tasks", map[string]any{})
	s := mcp.NewServer(&mcp.Implementation{Name: "cli-test-tasks", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	s.AddTool(&mcp.Tool{Name: "research", Description: "Researches a topic, as a task.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("research only runs as a task")
		})
	var mu sync.Mutex
	polls := map[string]int{}
	topics := map[string]string{}
	task := func(id, status, msg string) map[string]any {
		return map[string]any{"taskId": id, "status": status, "statusMessage": msg, "createdAt": "2026-01-01T00:00:00Z",
			"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 100}
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p := req.GetParams().(*mcp.CallToolParamsRaw)
			var args struct {
				Topic string `json:"topic"`
			}
			_ = json.Unmarshal(p.Arguments, &args)
			mu.Lock()
			id := "research-" + strconv.Itoa(len(topics)+1)
			topics[id] = args.Topic
			mu.Unlock()
			m := task(id, "working", "queued")
			m["resultType"] = "task"
			return jsonResult(m), nil
		}
	})
	type params struct {
		mcp.ParamsBase
		TaskID string `json:"taskId"`
	}
	_ = mcp.AddReceivingCustomMethod(s, "tasks/get", func(_ context.Context, _ *mcp.ServerSession, p *params) (*jsonRes, error) {
		mu.Lock()
		defer mu.Unlock()
		polls[p.TaskID]++
		n := polls[p.TaskID]
		if topics[p.TaskID] == "forever" || n <= 3 {
			return jsonResult(task(p.TaskID, "working", "step "+strconv.Itoa(n))), nil
		}
		m := task(p.TaskID, "completed", "done")
		m["result"] = textResult("report on " + topics[p.TaskID])
		return jsonResult(m), nil
	})
	_ = mcp.AddReceivingCustomMethod(s, "tasks/cancel", func(_ context.Context, _ *mcp.ServerSession, p *params) (*jsonRes, error) {
		_ = os.WriteFile(os.Getenv(cancelFileEnv), []byte(p.TaskID), 0o600)
		return jsonResult(map[string]any{}), nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// jsonRes is a custom method's result given as JSON.
type jsonRes struct {
	mcp.ResultBase
	b []byte
}

func (r *jsonRes) MarshalJSON() ([]byte, error) { return r.b, nil }

func jsonResult(v any) *jsonRes {
	b, _ := json.Marshal(v)
	return &jsonRes{b: b}
}

// tasksConfig writes a servers file running the "tasks" test server.
func tasksConfig(t *testing.T) (cfg, cancelFile string) {
	t.Helper()
	dir := t.TempDir()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cancelFile = filepath.Join(dir, "cancelled")
	cfg = filepath.Join(dir, "servers.yaml")
	yaml := "servers:\n  lab:\n    command: " + strconv.Quote(bin) + "\n    env:\n      " + serverEnv + ": tasks\n      " +
		cancelFileEnv + ": " + strconv.Quote(cancelFile) + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, cancelFile
}

// call shows a task's status lines on stderr while it runs, then prints the result.
func TestCallTask(t *testing.T) {
	cfg, _ := tasksConfig(t)
	stdout, stderr, code := runCLI(t, "call", cfg, "research", `{"topic":"go"}`)
	if code != 0 || stdout != "report on go\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{`task "research-1": working: queued`, `task "research-1": working: step 2`, `task "research-1": completed: done`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// Ctrl-C (the ctx ending) while a task runs cancels it on the server and exits 2 saying so.
func TestCallTaskInterrupted(t *testing.T) {
	cfg, cancelFile := tasksConfig(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var errb syncWriter
	go func() { // interrupt once the task reported a status
		for !strings.Contains(errb.String(), "step 1") {
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond): // polling a buffer; the test's deadline bounds it
			}
		}
		cancel()
	}()
	var out strings.Builder
	err := run(ctx, []string{"call", cfg, "research", `{"topic":"forever"}`}, &out, &errb)
	code := exitCode(err, &errb)
	if code != exitFailed || !strings.Contains(errb.String(), `interrupted; task "research-1" was cancelled on the server`) {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
	if b, err := os.ReadFile(cancelFile); err != nil || string(b) != "research-1" {
		t.Errorf("the server saw tasks/cancel for %q (%v), want research-1", b, err)
	}
}

// syncWriter is a strings.Builder safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
