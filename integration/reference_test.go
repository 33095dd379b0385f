package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestFilesystem runs server-filesystem on a temporary directory.
func TestFilesystem(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	const content = "hello from mcpbridge\nsecond line"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	set := connect(t, ctx, []bridge.ServerConfig{s.stdio("fs", pkgFilesystem, dir)}, nil)
	tools := set.Tools()

	tests := []struct {
		tool string
		args any
		want []string
	}{
		{"list_directory", map[string]string{"path": dir}, []string{"[FILE] hello.txt"}},
		{"read_file", map[string]string{"path": file}, []string{"hello from mcpbridge", "second line"}},
		{"read_text_file", map[string]any{"path": file, "head": 1}, []string{"hello from mcpbridge"}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			tool := findTool(t, tools, "fs", tc.tool)
			out, err := tool.Handler(ctx, mustJSON(t, tc.args))
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s = %q, want it to contain %q", tc.tool, out, w)
				}
			}
		})
	}
	t.Run("outside the allowed directory is a tool error", func(t *testing.T) {
		tool := findTool(t, tools, "fs", "read_text_file")
		_, err := tool.Handler(ctx, mustJSON(t, map[string]string{"path": "/etc/hostname"}))
		if err == nil {
			t.Fatal("reading outside the allowed directory succeeded")
		}
	})
}

// TestMemory runs server-memory with its store in a temporary file.
func TestMemory(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	cfg := s.stdio("memory", pkgMemory)
	cfg.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
	set := connect(t, ctx, []bridge.ServerConfig{cfg}, nil)
	tools := set.Tools()

	create := findTool(t, tools, "memory", "create_entities")
	out, err := create.Handler(ctx, json.RawMessage(
		`{"entities":[{"name":"mcpbridge","entityType":"project","observations":["bridges MCP servers to agents"]}]}`))
	if err != nil {
		t.Fatalf("create_entities: %v", err)
	}
	if !strings.Contains(out, "mcpbridge") {
		t.Errorf("create_entities = %q, want the created entity", out)
	}
	read := findTool(t, tools, "memory", "read_graph")
	out, err = read.Handler(ctx, nil)
	if err != nil {
		t.Fatalf("read_graph: %v", err)
	}
	for _, w := range []string{"mcpbridge", "project", "bridges MCP servers to agents"} {
		if !strings.Contains(out, w) {
			t.Errorf("read_graph = %q, want it to contain %q", out, w)
		}
	}
}
