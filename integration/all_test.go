package integration

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

var validToolName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// TestAllServersAtOnce connects every server of the suite in one Connect, plus a missing
// command and a dead URL, which are skipped with a *bridge.ServerError each.
func TestAllServersAtOnce(t *testing.T) {
	s := requireServers(t)
	httpBase := startHTTPServer(t, s, pkgEverything, "streamableHttp")
	sseBase := startHTTPServer(t, s, pkgEverything, "sse")
	deadURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/mcp"
	ctx := testContext(t, testTimeout)

	memory := s.stdio("memory", pkgMemory)
	memory.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	cfgs := []bridge.ServerConfig{
		s.stdio("everything", pkgEverything, "stdio"),
		{ID: "missing", Command: "mcpbridge-integration-no-such-command", Args: []string{"stdio"}},
		{ID: "everything-http", Type: bridge.TypeHTTP, URL: httpBase + "/mcp"},
		{ID: "everything-sse", Type: bridge.TypeSSE, URL: sseBase + "/sse"},
		s.stdio("fs", pkgFilesystem, t.TempDir()),
		memory,
		{ID: "dead", URL: deadURL},
		s.stdio("basic", pkgBasicVanillaJS, "--stdio"),
		s.stdio("monitor", pkgSystemMonitor, "--stdio"),
	}
	order := make(map[string]int, len(cfgs))
	for i, c := range cfgs {
		order[c.ID] = i
	}
	start := time.Now()
	set := connectAllowingErrors(t, ctx, cfgs, nil)
	tools, err := set.Tools(), failedErr(set)
	t.Logf("Connect of %d servers took %v", len(cfgs), time.Since(start))

	t.Run("skipped servers", func(t *testing.T) {
		if err == nil {
			t.Fatal("Connect returned no error for a missing command and a dead URL")
		}
		var skipped []string
		for _, se := range serverErrors(err) {
			skipped = append(skipped, se.Server)
			if se.Err == nil || se.Phase == "" {
				t.Errorf("ServerError %+v: want a phase and a cause", se)
			}
		}
		if want := []string{"missing", "dead"}; !slices.Equal(skipped, want) {
			t.Errorf("skipped servers = %v, want %v (in config order); err: %v", skipped, want, err)
		}
		for _, id := range []string{"missing", "dead"} {
			if srv, ok := set.Lookup(id); ok {
				t.Errorf("Lookup(%q) = %v, want not found", id, srv)
			}
		}
	})

	t.Run("config order", func(t *testing.T) {
		seen := make(map[string]int)
		last := -1
		for _, tool := range tools {
			id := tool.Server.ID()
			i, ok := order[id]
			if !ok || i < last {
				t.Fatalf("tool %q of server %q out of config order in %v", tool.Name, id, toolNames(tools))
			}
			last = i
			seen[id]++
		}
		for _, id := range []string{"everything", "everything-http", "everything-sse", "fs", "memory", "basic", "monitor"} {
			if seen[id] == 0 {
				t.Errorf("server %q contributed no tools", id)
			}
		}
	})

	t.Run("names unique and valid", func(t *testing.T) {
		names := make(map[string]bool, len(tools))
		for _, tool := range tools {
			if names[tool.Name] {
				t.Errorf("duplicate tool name %q", tool.Name)
			}
			names[tool.Name] = true
			if !validToolName.MatchString(tool.Name) {
				t.Errorf("tool name %q is not provider-safe", tool.Name)
			}
		}
		// The first server keeps "echo"; later servers with the same tool get "<ID>__echo".
		if got := findTool(t, tools, "everything", "echo").Name; got != "echo" {
			t.Errorf("everything's echo is named %q, want echo", got)
		}
		for _, id := range []string{"everything-http", "everything-sse"} {
			if got, want := findTool(t, tools, id, "echo").Name, id+"__echo"; got != want {
				t.Errorf("%s's echo is named %q, want %q", id, got, want)
			}
		}
	})

	t.Run("every server answers", func(t *testing.T) {
		tests := []struct {
			server, tool, args, want string
		}{
			{"everything", "echo", `{"message":"one"}`, "Echo: one"},
			{"everything-http", "echo", `{"message":"two"}`, "Echo: two"},
			{"everything-sse", "echo", `{"message":"three"}`, "Echo: three"},
			{"fs", "list_allowed_directories", `{}`, string(filepath.Separator)},
			{"memory", "read_graph", `{}`, "entities"},
			{"basic", "get-time", `{}`, "T"},
			{"monitor", "get-system-info", `{}`, "hostname"},
		}
		for _, tc := range tests {
			t.Run(tc.server, func(t *testing.T) {
				out, err := findTool(t, tools, tc.server, tc.tool).Handler(ctx, json.RawMessage(tc.args))
				if err != nil || !strings.Contains(out, tc.want) {
					t.Errorf("%s/%s = %q, %v; want it to contain %q", tc.server, tc.tool, out, err, tc.want)
				}
			})
		}
	})
}
