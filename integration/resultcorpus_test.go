package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite results/testdata/corpus from the npm servers (TestResultCorpus)")

// corpusDir is where the corpus of real tools/call results lives: package results' test
// data, read by its TestCorpus (each fact once, none lost).
const corpusDir = "../results/testdata/corpus"

// corpusCall is one tools/call of the corpus: the server (an npm package of package.json
// with its arguments), the tool and its arguments. name is the corpus file's stem.
type corpusCall struct {
	name string
	tool string
	args string
}

type corpusServer struct {
	id    string
	pkg   string
	args  func(root string) []string
	env   func(root string) []string
	calls []corpusCall
}

// corpusServers are the servers and calls of the corpus: every integration server, and
// the sweep's one that answers without credentials or a browser (sequential-thinking).
func corpusServers() []corpusServer {
	return []corpusServer{
		{id: "filesystem", pkg: pkgFilesystem, args: func(root string) []string { return []string{root} },
			calls: []corpusCall{
				{"read_text_file", "read_text_file", `{"path":"{root}/notes.md"}`},
				{"read_text_file_head", "read_text_file", `{"path":"{root}/notes.md","head":3}`},
				{"read_multiple_files", "read_multiple_files", `{"paths":["{root}/notes.md","{root}/data.json"]}`},
				{"write_file", "write_file", `{"path":"{root}/out.txt","content":"written by the corpus capture\n"}`},
				{"edit_file", "edit_file", `{"path":"{root}/notes.md","edits":[{"oldText":"two","newText":"zwei"}],"dryRun":true}`},
				{"create_directory", "create_directory", `{"path":"{root}/sub/dir"}`},
				{"list_directory", "list_directory", `{"path":"{root}"}`},
				{"list_directory_with_sizes", "list_directory_with_sizes", `{"path":"{root}","sortBy":"name"}`},
				{"directory_tree", "directory_tree", `{"path":"{root}"}`},
				{"move_file", "move_file", `{"source":"{root}/out.txt","destination":"{root}/sub/out.txt"}`},
				{"search_files", "search_files", `{"path":"{root}","pattern":"*.md"}`},
				{"list_allowed_directories", "list_allowed_directories", `{}`},
			}},
		{id: "memory", pkg: pkgMemory, env: func(root string) []string { return []string{"MEMORY_FILE_PATH=" + filepath.Join(root, "memory.jsonl")} },
			calls: []corpusCall{
				{"create_entities", "create_entities", `{"entities":[{"name":"Ada Lovelace","entityType":"person","observations":["wrote the first program","born 1815"]},{"name":"Analytical Engine","entityType":"machine","observations":["designed by Babbage"]}]}`},
				{"create_relations", "create_relations", `{"relations":[{"from":"Ada Lovelace","to":"Analytical Engine","relationType":"programmed"}]}`},
				{"add_observations", "add_observations", `{"observations":[{"entityName":"Ada Lovelace","contents":["died 1852"]}]}`},
				{"read_graph", "read_graph", `{}`},
				{"search_nodes", "search_nodes", `{"query":"Engine"}`},
				{"open_nodes", "open_nodes", `{"names":["Ada Lovelace"]}`},
				{"delete_observations", "delete_observations", `{"deletions":[{"entityName":"Ada Lovelace","observations":["born 1815"]}]}`},
				{"delete_relations", "delete_relations", `{"relations":[{"from":"Ada Lovelace","to":"Analytical Engine","relationType":"programmed"}]}`},
				{"delete_entities", "delete_entities", `{"entityNames":["Analytical Engine"]}`},
			}},
		{id: "everything", pkg: pkgEverything, args: func(string) []string { return []string{"stdio"} },
			calls: []corpusCall{
				{"echo", "echo", `{"message":"hello from the corpus"}`},
				{"get-sum", "get-sum", `{"a":2,"b":40}`},
				{"get-structured-content", "get-structured-content", `{"location":"New York"}`},
				{"get-annotated-message", "get-annotated-message", `{"messageType":"success","includeImage":false}`},
				{"get-resource-links", "get-resource-links", `{"count":2}`},
				{"get-resource-reference", "get-resource-reference", `{"resourceType":"Text","resourceId":1}`},
				{"get-tiny-image", "get-tiny-image", `{}`},
			}},
		{id: "system-monitor", pkg: pkgSystemMonitor, args: func(string) []string { return []string{"--stdio"} },
			calls: []corpusCall{
				{"get-system-info", "get-system-info", `{}`},
			}},
		{id: "basic-vanillajs", pkg: pkgBasicVanillaJS, args: func(string) []string { return []string{"--stdio"} },
			calls: []corpusCall{
				{"get-time", "get-time", `{}`},
			}},
		{id: "sequential-thinking", pkg: pkgSequentialThinking,
			calls: []corpusCall{
				{"sequentialthinking", "sequentialthinking", `{"thought":"First, list what is known.","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":2}`},
				{"sequentialthinking_2", "sequentialthinking", `{"thought":"Then conclude.","nextThoughtNeeded":false,"thoughtNumber":2,"totalThoughts":2}`},
			}},
	}
}

// corpusEntry is one file of the corpus.
type corpusEntry struct {
	Server    string          `json:"server"` // package@version
	Tool      string          `json:"tool"`   // the tool called
	Arguments json.RawMessage `json:"arguments"`
	// App: the tool is an MCP App's (its listing has _meta.ui.resourceUri).
	App bool `json:"app,omitempty"`
	// Result is the JSON-RPC result as the server sent it, byte for byte.
	Result json.RawMessage `json:"result"`
}

// TestResultCorpus calls the corpus's tools on the real npm servers. With -update-corpus it
// rewrites results/testdata/corpus (then run: go test ./results -run TestCorpus -v for the
// bytes saved); without, it checks that every call still answers with the members its
// stored result has, so that the corpus stays what the servers send.
//
//	go test ./integration -run '^TestResultCorpus$' -count=1 -args -update-corpus
func TestResultCorpus(t *testing.T) {
	s := requireServers(t)
	root := t.TempDir()
	for name, body := range map[string]string{
		"notes.md":  "# Notes\n\nOne line, then\n- one\n- two\n\nThe end.\n",
		"data.json": "{\"b\": 2, \"a\": [1, 2, 3]}\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if *updateCorpus {
		if err := os.MkdirAll(corpusDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, sv := range corpusServers() {
		t.Run(sv.id, func(t *testing.T) {
			var args, env []string
			if sv.args != nil {
				args = sv.args(root)
			}
			if sv.env != nil {
				env = sv.env(root)
			}
			c := startRawClient(t, s.node, s.bins[sv.pkg], root, args, env)
			apps := c.appTools(t)
			version := installedVersion(t, s.dir, sv.pkg)
			for _, call := range sv.calls {
				a := strings.ReplaceAll(call.args, "{root}", root)
				res := c.call(t, call.tool, a)
				e := corpusEntry{Server: sv.pkg + "@" + version, Tool: call.tool, Arguments: json.RawMessage(strings.ReplaceAll(call.args, "{root}", "/corpus")), App: apps[call.tool],
					Result: json.RawMessage(bytes.ReplaceAll(res, []byte(root), []byte("/corpus")))}
				path := filepath.Join(corpusDir, sv.id+"."+call.name+".json")
				if *updateCorpus {
					data, err := json.MarshalIndent(e, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					// MarshalIndent re-indents the result; keep the server's bytes instead.
					data = append(bytes.Replace(data, indentJSON(e.Result), e.Result, 1), '\n')
					if err := os.WriteFile(path, data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (regenerate: go test ./integration -run '^TestResultCorpus$' -args -update-corpus)", err)
				}
				var stored corpusEntry
				if err := json.Unmarshal(data, &stored); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if got, want := members(t, res), members(t, stored.Result); !slices.Equal(got, want) {
					t.Errorf("%s: result members %v, the corpus has %v (regenerate the corpus)", call.name, got, want)
				}
			}
		})
	}
}

// indentJSON is raw as MarshalIndent writes it at the result's depth in a corpusEntry.
func indentJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	_ = json.Indent(&b, raw, "  ", "  ")
	return b.Bytes()
}

// members returns the top-level members of a result, sorted.
func members(t *testing.T, raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func installedVersion(t *testing.T, dir, pkg string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	return meta.Version
}

// rawClient speaks JSON-RPC over a server's stdio itself, so that the bytes of each result
// are exactly those the server wrote (no SDK decodes them on the way).
type rawClient struct {
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startRawClient(t *testing.T, node, bin, dir string, args, env []string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
		if t.Failed() {
			t.Logf("stderr: %s", stderr.String())
		}
	})
	c := &rawClient{in: in, out: bufio.NewReaderSize(out, 1<<20)}
	c.request(t, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"mcpbridge-corpus","version":"0"}}`)
	c.write(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawClient) write(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// request sends one request and returns its result's bytes as the server wrote them.
func (c *rawClient) request(t *testing.T, method, params string) json.RawMessage {
	t.Helper()
	c.next++
	c.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.next, method, params))
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", method, err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"` // a copy of the bytes as sent
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" || *msg.ID != c.next {
			continue // a notification, a request of the server's, or not ours
		}
		if msg.Error != nil {
			t.Fatalf("%s %s: error %s", method, params, msg.Error)
		}
		return msg.Result
	}
}

func (c *rawClient) call(t *testing.T, tool, args string) json.RawMessage {
	t.Helper()
	return c.request(t, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
}

// appTools returns the names of the listed tools with an MCP App.
func (c *rawClient) appTools(t *testing.T) map[string]bool {
	t.Helper()
	var list struct {
		Tools []struct {
			Name string `json:"name"`
			Meta struct {
				UI struct {
					ResourceURI string `json:"resourceUri"`
				} `json:"ui"`
				Flat string `json:"ui/resourceUri"`
			} `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(c.request(t, "tools/list", `{}`), &list); err != nil {
		t.Fatal(err)
	}
	apps := map[string]bool{}
	for _, tl := range list.Tools {
		apps[tl.Name] = tl.Meta.UI.ResourceURI != "" || tl.Meta.Flat != ""
	}
	return apps
}

// TestStructuredKeyOrder: through the bridge, the model reads the real sequential-thinking
// server's structured content in the server's key order (go-sdk decodes it into a map,
// which sorts them), once: the pretty-printed copy the server also sends is dropped.
func TestStructuredKeyOrder(t *testing.T) {
	s := requireServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := bridge.Dial(ctx, s.stdio("thinking", pkgSequentialThinking), &bridge.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var tool bridge.Tool
	for _, tl := range srv.Tools() {
		if tl.RemoteName == "sequentialthinking" {
			tool = tl
		}
	}
	if tool.Handler == nil {
		t.Fatalf("no sequentialthinking tool in %v", srv.Tools())
	}
	out, err := tool.Handler(ctx, json.RawMessage(`{"thought":"Start.","nextThoughtNeeded":true,"thoughtNumber":1,"totalThoughts":3}`))
	const want = `{"thoughtNumber":1,"totalThoughts":3,"nextThoughtNeeded":true,"branches":[],"thoughtHistoryLength":1}`
	if err != nil || out != want {
		t.Errorf("Handler() = %q, %v; want %q", out, err, want)
	}
}
