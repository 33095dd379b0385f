package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// tinyImagePrefix is the start of server-everything's base64 PNG; it must never reach the model.
const tinyImagePrefix = "iVBORw0KGgo"

// TestEverythingStdio runs server-everything over stdio through the bridge.
func TestEverythingStdio(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	set := connect(t, ctx, []bridge.ServerConfig{s.stdio("everything", pkgEverything, "stdio")}, nil)
	tools := set.Tools()

	t.Run("list", func(t *testing.T) {
		for _, name := range []string{"echo", "get-sum", "get-structured-content", "get-tiny-image",
			"get-resource-links", "get-resource-reference", "get-annotated-message",
			"trigger-long-running-operation"} {
			tool := findTool(t, tools, "everything", name)
			if tool.Name != name {
				t.Errorf("tool %q: Name = %q, want the server's own name", name, tool.Name)
			}
			if tool.Description == "" || tool.Handler == nil {
				t.Errorf("tool %q: Description %q, Handler set %v", name, tool.Description, tool.Handler != nil)
			}
			if tool.UIResource != "" {
				t.Errorf("tool %q: UIResource = %q, want none", name, tool.UIResource)
			}
		}
		srv, ok := set.Lookup("everything")
		if !ok || srv.ID() != "everything" {
			t.Fatalf("Lookup(everything) = %v, %v", srv, ok)
		}
		if got, want := len(srv.Tools()), len(tools); got != want {
			t.Errorf("Server.Tools() has %d tools, the set has %d", got, want)
		}
		// simulate-research-query can only run as an MCP task: the bridge runs it as one, so
		// it is offered like any tool and nothing is skipped (TestEverythingTasks calls it).
		findTool(t, tools, "everything", "simulate-research-query")
		for _, p := range srv.Status().Problems {
			if p.Skipped {
				t.Errorf("tool skipped: %+v", p)
			}
		}
		// A host hands the list to a model API as is.
		b, err := json.Marshal(findTool(t, tools, "everything", "echo"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if len(m) != 3 || m["name"] == nil || m["description"] == nil || m["parameters"] == nil {
			t.Errorf("json.Marshal(tool) = %s, want exactly name, description, parameters", b)
		}
	})

	t.Run("parameters are the server's inputSchema bytes", func(t *testing.T) {
		raw := captureToolsList(t, ctx, s, pkgEverything, "stdio")
		byName := make(map[string]json.RawMessage, len(raw))
		for _, r := range raw {
			byName[r.Name] = r.InputSchema
		}
		for _, tool := range tools {
			want, ok := byName[tool.RemoteName]
			if !ok {
				t.Errorf("bridge tool %q is not in the server's own tools/list", tool.RemoteName)
				continue
			}
			if !sameSchema(tool.Parameters, want) {
				t.Errorf("tool %q Parameters differ from the server's inputSchema\n got: %s\nwant: %s",
					tool.RemoteName, tool.Parameters, want)
			}
		}
	})

	calls := []struct {
		name    string
		tool    string
		args    string
		want    []string
		notWant []string
		check   func(t *testing.T, out string)
	}{
		{name: "echo", tool: "echo", args: `{"message":"hi"}`, want: []string{"Echo: hi"}},
		{name: "get-sum", tool: "get-sum", args: `{"a":2,"b":3}`, want: []string{"5"}},
		{
			name: "structured content first", tool: "get-structured-content", args: `{"location":"New York"}`,
			check: func(t *testing.T, out string) {
				first, _, _ := strings.Cut(out, "\n")
				var got map[string]any
				if err := json.Unmarshal([]byte(first), &got); err != nil {
					t.Fatalf("first line %q is not the structured JSON: %v", first, err)
				}
				want := map[string]any{"temperature": 33.0, "conditions": "Cloudy", "humidity": 82.0}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("structured content = %v, want %v", got, want)
				}
				var compact bytes.Buffer
				if err := json.Compact(&compact, []byte(first)); err != nil || compact.String() != first {
					t.Errorf("structured JSON %q is not compact", first)
				}
			},
		},
		{
			name: "image placeholder, nil args", tool: "get-tiny-image", args: "",
			want:    []string{"Here's the image you requested:", "The image above is the MCP logo.", "image/png"},
			notWant: []string{tinyImagePrefix},
			check: func(t *testing.T, out string) {
				if len(out) > 1000 {
					t.Errorf("output is %d bytes; an image must be a short placeholder:\n%s", len(out), out)
				}
			},
		},
		{
			name: "resource links", tool: "get-resource-links", args: `{"count":2}`,
			want: []string{"Here are 2 resource links", "demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"},
		},
		{
			name: "embedded text resource", tool: "get-resource-reference", args: `{"resourceType":"Text","resourceId":1}`,
			want: []string{"Returning resource reference for Resource 1:",
				"Resource 1: This is a plaintext resource", "demo://resource/dynamic/text/1"},
		},
		{
			name: "annotated message with image", tool: "get-annotated-message", args: `{"messageType":"error","includeImage":true}`,
			want:    []string{"Error: Operation failed", "image/png"},
			notWant: []string{tinyImagePrefix},
		},
		{
			name: "long-running operation", tool: "trigger-long-running-operation", args: `{"duration":1,"steps":2}`,
			want: []string{"Long running operation completed. Duration: 1 seconds, Steps: 2."},
		},
	}
	for _, tc := range calls {
		t.Run("call "+tc.name, func(t *testing.T) {
			tool := findTool(t, tools, "everything", tc.tool)
			var args json.RawMessage
			if tc.args != "" {
				args = json.RawMessage(tc.args)
			}
			out, err := tool.Handler(ctx, args)
			if err != nil {
				t.Fatalf("%s(%s): %v", tc.tool, tc.args, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s(%s) = %q, want it to contain %q", tc.tool, tc.args, out, w)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(out, nw) {
					t.Errorf("%s(%s) output contains %q:\n%.300s", tc.tool, tc.args, nw, out)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}

	t.Run("isError is a ToolError", func(t *testing.T) {
		tool := findTool(t, tools, "everything", "get-resource-reference")
		// resourceId 0 satisfies the schema (a number), so the server itself rejects it.
		_, err := tool.Handler(ctx, json.RawMessage(`{"resourceType":"Text","resourceId":0}`))
		te, ok := errorsAsType[*results.ToolError](err)
		if !ok {
			t.Fatalf("err = %v (%T), want a *results.ToolError", err, err)
		}
		if !strings.Contains(te.Text, "Invalid resourceId") || te.Error() != te.Text {
			t.Errorf("ToolError text = %q, want the server's message", te.Text)
		}
	})

	t.Run("invalid arguments never reach the server", func(t *testing.T) {
		tool := findTool(t, tools, "everything", "get-sum")
		tests := []struct{ name, args, want string }{
			{"string for number", `{"a":"two","b":3}`, "/a"},
			{"missing required", `{"a":2}`, "b"},
			{"not an object", `[2,3]`, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := tool.Handler(ctx, json.RawMessage(tc.args))
				if err == nil {
					t.Fatalf("get-sum(%s) succeeded", tc.args)
				}
				if _, ok := errorsAsType[*results.ToolError](err); ok {
					t.Errorf("get-sum(%s) = ToolError %v: the server ran the call", tc.args, err)
				}
				// The server's own validator answers "MCP error -32602: Input validation error".
				if msg := err.Error(); strings.Contains(msg, "-32602") || strings.Contains(msg, "Input validation error") ||
					!strings.Contains(msg, tc.want) {
					t.Errorf("get-sum(%s) error = %q, want the bridge's own error naming %q", tc.args, msg, tc.want)
				}
			})
		}
	})

	t.Run("concurrent calls", func(t *testing.T) {
		tool := findTool(t, tools, "everything", "echo")
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				msg := strings.Repeat("x", i+1)
				args, _ := json.Marshal(map[string]string{"message": msg})
				out, err := tool.Handler(ctx, args)
				if err == nil && !strings.Contains(out, "Echo: "+msg) {
					err = errors.New("call " + msg + " got " + out)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("progress of a long-running operation reaches the caller", func(t *testing.T) {
		tool := findTool(t, tools, "everything", "trigger-long-running-operation")
		var mu sync.Mutex
		var got []bridge.Progress
		pctx := bridge.WithProgress(ctx, func(_ context.Context, p bridge.Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		})
		if _, err := tool.Handler(pctx, json.RawMessage(`{"duration":1,"steps":3}`)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= 3 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 {
			t.Fatalf("progress notifications = %+v, want 3", got)
		}
		for i, p := range got {
			if p.Server != "everything" || p.Tool != "trigger-long-running-operation" || p.Progress != float64(i+1) || p.Total != 3 {
				t.Errorf("progress %d = %+v", i, p)
			}
		}
	})

	t.Run("cancellation returns promptly and the next call works", func(t *testing.T) {
		tool := findTool(t, tools, "everything", "trigger-long-running-operation")
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := time.AfterFunc(300*time.Millisecond, cancel)
		defer stop.Stop()
		start := time.Now()
		out, err := tool.Handler(callCtx, json.RawMessage(`{"duration":30,"steps":30}`))
		elapsed := time.Since(start)
		if err == nil {
			t.Fatalf("cancelled call succeeded after %v: %q", elapsed, out)
		}
		if elapsed > 5*time.Second {
			t.Errorf("cancelled call returned after %v, want promptly", elapsed)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want it to wrap context.Canceled", err)
		}
		echo := findTool(t, tools, "everything", "echo")
		out, err = echo.Handler(ctx, json.RawMessage(`{"message":"after cancel"}`))
		if err != nil || !strings.Contains(out, "Echo: after cancel") {
			t.Errorf("echo after cancel = %q, %v", out, err)
		}
	})

	t.Run("Server.CallTool is raw", func(t *testing.T) {
		srv := findTool(t, tools, "everything", "get-resource-reference").Server
		// No validation on the raw path: the lowercase enum value reaches the server.
		res, err := srv.CallTool(ctx, "get-resource-reference", json.RawMessage(`{"resourceType":"text"}`))
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if !res.IsError {
			t.Errorf("CallTool with lowercase resourceType: IsError = false, want true; content %v", res.Content)
		}
		res, err = srv.CallTool(ctx, "get-structured-content", json.RawMessage(`{"location":"Chicago"}`))
		if err != nil || res.IsError || res.StructuredContent == nil {
			t.Fatalf("CallTool(get-structured-content) = %+v, %v", res, err)
		}
	})
}

// TestEverythingValidationOff checks that with validation off a server-side isError still comes
// back as a *results.ToolError: the lowercase enum value the schema forbids reaches the server.
func TestEverythingValidationOff(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	set := connect(t, ctx, []bridge.ServerConfig{s.stdio("everything", pkgEverything, "stdio")},
		&bridge.Options{DisableValidation: true})
	tools := set.Tools()
	tool := findTool(t, tools, "everything", "get-resource-reference")
	_, err := tool.Handler(ctx, json.RawMessage(`{"resourceType":"text"}`))
	te, ok := errorsAsType[*results.ToolError](err)
	if !ok {
		t.Fatalf("err = %v (%T), want a *results.ToolError", err, err)
	}
	if !strings.Contains(te.Text, "resourceType") {
		t.Errorf("ToolError text = %q, want it to name resourceType", te.Text)
	}
}
