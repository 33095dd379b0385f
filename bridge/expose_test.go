package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
)

// docsServer is a real go-sdk server with resources, a resource template and prompts.
func docsServer(prompts bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "search", Description: "Searches.", InputSchema: json.RawMessage(emptySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("found"), nil })
	srv.AddResource(&mcp.Resource{URI: "file:///readme.md", Name: "readme", MIMEType: "text/markdown", Description: "The readme."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# Read me\nfirst"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "file:///logo.png", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: make([]byte, 3000)}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///notes/{id}", Name: "note"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "note " + strings.TrimPrefix(req.Params.URI, "file:///notes/")}}}, nil
		})
	if prompts {
		srv.AddPrompt(&mcp.Prompt{Name: "review", Description: "Reviews code.", Arguments: []*mcp.PromptArgument{{Name: "lang", Required: true}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "A review.", Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: "Review this " + req.Params.Arguments["lang"] + " code."}},
					{Role: "assistant", Content: &mcp.TextContent{Text: "Sure."}},
				}}, nil
			})
	}
	return srv
}

func inProcess(id string, srv *mcp.Server) bridge.ServerConfig {
	return bridge.ServerConfig{ID: id, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func TestExposeIsOffByDefault(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{inProcess("docs", docsServer(true))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(tools), ","); got != "search" {
		t.Errorf("tools = %s, want only the server's own", got)
	}
}

func TestExposeResourcesAndPrompts(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	cfg := inProcess("docs", docsServer(true))
	cfg.Expose = []string{bridge.ExposeResources, bridge.ExposePrompts}
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, &bridge.Options{Logger: discard(),
		BeforeCall: func(_ context.Context, c *bridge.Call) error {
			mu.Lock()
			defer mu.Unlock()
			methods = append(methods, c.Method+" "+c.Tool+" "+c.RemoteName)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	tools := set.Tools()
	if got, want := strings.Join(names(tools), ","), "search,docs__list_resources,docs__read_resource,docs__list_prompts,docs__get_prompt"; got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
	for _, tool := range tools[1:] {
		if !bridge.ValidToolName(tool.Name) || !json.Valid(tool.Parameters) || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || !strings.Contains(tool.Description, `"docs"`) {
			t.Errorf("%s: name, schema, annotations or description wrong: %+v", tool.Name, tool)
		}
	}
	ctx := ctxT(t, 30*time.Second)
	tests := []struct {
		tool, args string
		want       []string
		invalid    bool
	}{
		{"docs__list_resources", ``, []string{`"uri":"file:///readme.md"`, `"uri":"file:///logo.png"`, `"uriTemplate":"file:///notes/{id}"`}, false},
		{"docs__read_resource", `{"uri":"file:///readme.md"}`, []string{"# Read me\nfirst"}, false},
		{"docs__read_resource", `{"uri":"file:///notes/7"}`, []string{"note 7"}, false},
		{"docs__read_resource", `{"uri":"file:///logo.png"}`, []string{"image/png", "file:///logo.png"}, false},
		{"docs__list_prompts", `{}`, []string{`"name":"review"`, `"name":"lang"`}, false},
		{"docs__get_prompt", `{"name":"review","arguments":{"lang":"Go"}}`, []string{"A review.\nuser: Review this Go code.\nassistant: Sure."}, false},
		{"docs__read_resource", `{}`, nil, true},
		{"docs__read_resource", `{"uri":"file:///x","extra":1}`, nil, true},
		{"docs__get_prompt", `{"name":"review","arguments":{"lang":7}}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			out, err := byName(t, tools, tt.tool).Handler(ctx, json.RawMessage(tt.args))
			if tt.invalid {
				if !errors.Is(err, bridge.ErrInvalidArguments) {
					t.Errorf("err = %v, want ErrInvalidArguments", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			if strings.Contains(out, "AAAA") {
				t.Errorf("output carries raw base64: %q", out)
			}
		})
	}
	// Invoke runs the Handler; RemoteName names the method, not a server tool.
	read := byName(t, tools, "docs__read_resource")
	if read.RemoteName != "resources/read" {
		t.Errorf("RemoteName = %q, want the method", read.RemoteName)
	}
	if inv, err := read.Invoke(ctx, json.RawMessage(`{"uri":"file:///readme.md"}`)); err != nil || !strings.Contains(inv.Text, "Read me") {
		t.Errorf("Invoke = %+v, %v", inv, err)
	}
	// A resource the server does not have is an error naming the phase.
	_, err = byName(t, tools, "docs__read_resource").Handler(ctx, json.RawMessage(`{"uri":"file:///nope"}`))
	var se *bridge.ServerError
	if !errors.As(err, &se) || se.Phase != bridge.PhaseRead {
		t.Errorf("reading a missing resource: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(methods) < 6 || methods[0] != "resources/list docs__list_resources " || methods[5] != "prompts/get docs__get_prompt review" {
		t.Errorf("BeforeCall saw %q", methods)
	}
}

func TestExposeWhatTheServerLacks(t *testing.T) {
	cfg := inProcess("docs", docsServer(false))
	cfg.Expose = []string{bridge.ExposePrompts, bridge.ExposeResources}
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(set.Tools()), ","); got != "search,docs__list_resources,docs__read_resource" {
		t.Errorf("tools = %s: prompts are exposed for a server without prompts", got)
	}
	srv, _ := set.Lookup("docs")
	found := false
	for _, p := range srv.Status().Problems {
		found = found || (p.Skipped && strings.Contains(p.Problem, "does not offer prompts"))
	}
	if !found {
		t.Errorf("problems = %+v, want one saying the server offers no prompts", srv.Status().Problems)
	}

	bad := inProcess("bad", docsServer(true))
	bad.Expose = []string{"tools"}
	set, err = connectSet(t, []bridge.ServerConfig{bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) != 1 || f[0].Phase != bridge.PhaseConfig || !strings.Contains(f[0].Error(), `unknown value "tools"`) {
		t.Errorf("failed = %v, want a config error naming the value", f)
	}
}

func TestExposeInServersFile(t *testing.T) {
	tests := []struct {
		name, entry string
		want        []string
		err         string
	}{
		{"list", "expose: [resources, prompts]", []string{"resources", "prompts"}, ""},
		{"one as a scalar", "expose: resources", []string{"resources"}, ""},
		{"unknown value", "expose: [resources, tools]", nil, `unknown value "tools"`},
		{"not a list", "expose: {a: b}", nil, "expose must be a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "servers.yaml")
			if err := os.WriteFile(path, []byte("servers:\n  s:\n    command: x\n    "+tt.entry+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfgs, err := bridge.LoadConfig(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "servers.yaml:4") {
					t.Errorf("err = %v, want servers.yaml:4 and %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfgs[0].Expose; strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Expose = %q, want %q", got, tt.want)
			}
		})
	}
}
