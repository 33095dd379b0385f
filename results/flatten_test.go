package results_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

func ptr[T any](v T) *T { return &v }

type flattenCase struct {
	name     string
	res      *mcp.CallToolResult
	opts     *results.Options
	want     string
	wireOnly bool // the go-sdk could not send it (nil blocks, Go-only values): skip the server run
}

// direct marks cases that only make sense for results built in Go.
const direct = true

var pngBytes = []byte("\x89PNG\r\n\x1a\n-fake-image-bytes-that-are-long-enough-to-spot-in-base64")

func flattenCases() []flattenCase {
	return []flattenCase{
		{
			name: "structured",
			res:  &mcp.CallToolResult{StructuredContent: map[string]any{"b": "<x&y>", "a": 1}},
			want: `{"a":1,"b":"<x&y>"}`,
		},
		{
			name: "structured with echo text",
			res: &mcp.CallToolResult{
				StructuredContent: map[string]any{"b": "<x&y>", "a": 1},
				Content:           []mcp.Content{&mcp.TextContent{Text: "{\"b\": \"\\u003cx\\u0026y\\u003e\",\n \"a\": 1.0}"}},
			},
			want: `{"a":1,"b":"<x&y>"}`,
		},
		{
			name: "structured with exact echo text",
			res: &mcp.CallToolResult{
				StructuredContent: []any{1, "two", nil, true},
				Content:           []mcp.Content{&mcp.TextContent{Text: `[1,"two",null,true]` + "\n"}},
			},
			want: `[1,"two",null,true]`,
		},
		{
			name: "structured string with whitespace-equal text",
			res: &mcp.CallToolResult{
				StructuredContent: "hello  world",
				Content:           []mcp.Content{&mcp.TextContent{Text: " hello world\n"}},
			},
			want: `"hello  world"`,
		},
		{
			name: "structured with non-echo text",
			res: &mcp.CallToolResult{
				StructuredContent: map[string]any{"n": 2},
				Content: []mcp.Content{
					&mcp.TextContent{Text: `{"n":3}`},
					&mcp.TextContent{Text: "2 results"},
				},
			},
			want: "{\"n\":2}\n{\"n\":3}\n2 results",
		},
		{
			name: "structured with image",
			res: &mcp.CallToolResult{
				StructuredContent: map[string]any{"ok": true},
				Content: []mcp.Content{
					&mcp.TextContent{Text: `{"ok":true}`},
					&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
				},
			},
			want: "{\"ok\":true}\n[image: image/png, 64 B]",
		},
		{
			name: "structured json.RawMessage",
			res: &mcp.CallToolResult{
				StructuredContent: json.RawMessage(`{"x": 1, "y": [ ] }`),
				Content:           []mcp.Content{&mcp.TextContent{Text: `{"y":[],"x":1e0}`}},
			},
			want:     `{"x":1,"y":[]}`,
			wireOnly: direct,
		},
		{
			name: "text only",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "first"}, &mcp.TextContent{Text: "second\n"}}},
			want: "first\nsecond\n",
		},
		{
			name: "blank text skipped",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: " \n\t"}, &mcp.TextContent{}, &mcp.TextContent{Text: "b"},
			}},
			want: "a\nb",
		},
		{
			name: "image only",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 5530)}}},
			want: "[image: image/png, 5.4 KB]",
		},
		{
			name: "image without MIME type",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pngBytes}}},
			want: "[image: 64 B]",
		},
		{
			name: "audio",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("wav")}}},
			want: "[audio: audio/wav, 3 B]",
		},
		{
			name: "embedded text resource",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "see:"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "line 1\nline 2"}},
			}},
			want: "see:\n[resource: file:///notes.txt (text/plain)]\nline 1\nline 2",
		},
		{
			name: "embedded blob resource",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3, 4}}},
			}},
			want: "[resource: file:///x.bin (application/octet-stream, 4 B)]",
		},
		{
			name: "embedded resource without contents",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{}}},
			want: "[resource: no contents]",
		},
		{
			name: "resource link",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "demo://x", Name: "x.txt", MIMEType: "text/plain", Size: ptr(int64(3))},
				&mcp.ResourceLink{URI: "demo://y", Name: "y"},
			}},
			want: "[resource link: demo://x (x.txt, text/plain, 3 B)]\n[resource link: demo://y (y)]",
		},
		{
			name: "resource link with data URI",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ResourceLink{URI: "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes), Name: "pic"},
			}},
			want: "[resource link: data:image/png;base64,…(88 B) (pic)]",
		},
		{
			name: "label fields stay on one line",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "demo://z", Name: "two\nlines"}}},
			want: "[resource link: demo://z (two lines)]",
		},
		{
			name: "tool use and tool result",
			res: &mcp.CallToolResult{Content: []mcp.Content{
				//lint:ignore SA1019 tests the blocks a server may still send (see flatten.go)
				&mcp.ToolUseContent{ID: "1", Name: "search", Input: map[string]any{}},
				//lint:ignore SA1019 tests the blocks a server may still send (see flatten.go)
				&mcp.ToolResultContent{ToolUseID: "1", IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "nested"}}},
			}},
			want: "[tool use: search]\n[tool result: error]\nnested",
		},
		{
			name: "is error",
			res:  &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom: city not found"}}},
			want: "boom: city not found",
		},
		{
			name: "is error without content",
			res:  &mcp.CallToolResult{IsError: true},
			want: `{"content":[],"isError":true}`,
		},
		{
			name: "app tool with structured content",
			res: &mcp.CallToolResult{
				StructuredContent: map[string]any{"rows": []any{1, 2, 3}},
				Content:           []mcp.Content{&mcp.TextContent{Text: "Showing 3 rows in the app."}},
			},
			opts: &results.Options{App: true},
			want: "Showing 3 rows in the app.",
		},
		{
			name: "app tool with structured content only",
			res:  &mcp.CallToolResult{StructuredContent: map[string]any{"rows": []any{1}}},
			opts: &results.Options{App: true},
			want: `{"content":[]}`,
		},
		{
			name: "empty",
			res:  &mcp.CallToolResult{},
			want: `{"content":[]}`,
		},
		{
			name: "empty text block",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}},
			want: `{"content":[{"type":"text","text":""}]}`,
		},
		{
			name: "meta only",
			res:  &mcp.CallToolResult{Meta: mcp.Meta{"k": "<v>"}},
			want: `{"_meta":{"k":"<v>"},"content":[]}`,
		},
		{
			name:     "nil blocks",
			res:      &mcp.CallToolResult{Content: []mcp.Content{nil, (*mcp.TextContent)(nil), (*mcp.ImageContent)(nil), (*mcp.EmbeddedResource)(nil), &mcp.TextContent{Text: "x"}}},
			want:     "x",
			wireOnly: direct,
		},
		{
			name:     "only nil blocks",
			res:      &mcp.CallToolResult{Content: []mcp.Content{nil, (*mcp.ResourceLink)(nil)}},
			want:     `{"content":[null,null]}`,
			wireOnly: direct,
		},
		{
			name:     "invalid UTF-8",
			res:      &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a\xffb"}}},
			want:     "a\uFFFDb",
			wireOnly: direct,
		},
		{
			name:     "unencodable structured content",
			res:      &mcp.CallToolResult{StructuredContent: func() {}, Content: []mcp.Content{&mcp.TextContent{Text: "fallback"}}},
			want:     "fallback",
			wireOnly: direct,
		},
	}
}

// check runs Flatten and verifies the invariants every result must satisfy.
func check(t *testing.T, res *mcp.CallToolResult, opts *results.Options, want string) {
	t.Helper()
	got, err := results.Flatten(res, opts)
	if got != want {
		t.Errorf("Flatten() = %q, want %q", got, want)
	}
	var te *results.ToolError
	switch {
	case res.IsError && !errors.As(err, &te):
		t.Errorf("Flatten() error = %v, want *ToolError", err)
	case res.IsError && te.Text != got:
		t.Errorf("ToolError.Text = %q, want the flattened text %q", te.Text, got)
	case !res.IsError && err != nil:
		t.Errorf("Flatten() error = %v, want nil", err)
	}
	if strings.Contains(got, base64.StdEncoding.EncodeToString(pngBytes)[:40]) {
		t.Errorf("Flatten() = %q contains base64 image data", got)
	}
}

func TestFlatten(t *testing.T) {
	for _, tc := range flattenCases() {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.res, tc.opts, tc.want) })
	}
}

// TestFlattenServer sends every case through a real go-sdk server and client, so that the
// results are the ones the SDK decodes.
func TestFlattenServer(t *testing.T) {
	cases := flattenCases()
	server := mcp.NewServer(&mcp.Implementation{Name: "results-test", Version: "1"}, nil)
	for _, tc := range cases {
		if tc.wireOnly {
			continue
		}
		res := tc.res
		server.AddTool(&mcp.Tool{Name: toolName(tc.name), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })
	}
	type out struct {
		Msg string `json:"msg"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "typed"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return nil, out{Msg: "<b>fish & chips</b>"}, nil
	})
	mcp.AddTool(server, &mcp.Tool{Name: "failing"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return nil, out{}, errors.New("no such city")
	})
	cs := connect(t, server)

	for _, tc := range cases {
		if tc.wireOnly {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, toolName(tc.name))
			check(t, res, tc.opts, tc.want)
		})
	}
	t.Run("typed tool with its echo text", func(t *testing.T) {
		res := call(t, cs, "typed")
		if len(res.Content) != 1 {
			t.Fatalf("typed tool sent %d content blocks, want the SDK's 1 echo block", len(res.Content))
		}
		check(t, res, nil, `{"msg":"<b>fish & chips</b>"}`)
	})
	t.Run("typed tool error", func(t *testing.T) {
		check(t, call(t, cs, "failing"), nil, "no such city")
	})
}

func toolName(caseName string) string { return strings.ReplaceAll(caseName, " ", "_") }

// connect serves server over in-memory transports and returns a connected client session.
func connect(t *testing.T, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server.Connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "results-test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client.Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("CallTool(%q): %v", name, err)
	}
	return res
}

func TestFlattenNil(t *testing.T) {
	got, err := results.Flatten(nil, nil)
	if err == nil || got != "" {
		t.Errorf("Flatten(nil) = %q, %v; want \"\" and an error", got, err)
	}
	var te *results.ToolError
	if errors.As(err, &te) {
		t.Errorf("Flatten(nil) error is a *ToolError, want a plain error")
	}
}

func TestFlattenCap(t *testing.T) {
	long := strings.Repeat("0123456789", 30_000) // 300,000 bytes
	text := func(s string, isErr bool) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		opts    *results.Options
		wantLen int  // length of the result (a cut one may be a few bytes shorter)
		cut     bool // a truncation marker is expected
	}{
		{"default cap", text(long, false), nil, results.DefaultMaxBytes, true},
		{"zero is default", text(long, false), &results.Options{}, results.DefaultMaxBytes, true},
		{"custom cap", text(long, false), &results.Options{MaxBytes: 1000}, 1000, true},
		{"no cap", text(long, false), &results.Options{MaxBytes: -1}, len(long), false},
		{"tiny cap raised", text(long, false), &results.Options{MaxBytes: 5}, results.MinTruncateBytes, true},
		{"error keeps MinErrorBytes", text(long, true), &results.Options{MaxBytes: 100}, results.MinErrorBytes, true},
		{"error with larger cap", text(long, true), &results.Options{MaxBytes: 5000}, 5000, true},
		{"error without cap", text(long, true), &results.Options{MaxBytes: -1}, len(long), false},
		{"under the cap", text(long[:999], false), &results.Options{MaxBytes: 1000}, 999, false},
		{"exactly the cap", text(long[:1000], false), &results.Options{MaxBytes: 1000}, 1000, false},
		{
			"cut across blocks",
			&mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: long[:600]},
				&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
				&mcp.TextContent{Text: long[:600]},
			}},
			&results.Options{MaxBytes: 1000}, 1000, true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := results.Flatten(tt.res, tt.opts)
			// A cut result may come out a little short: fewer digits in the marker, and no
			// split UTF-8 sequences.
			if len(got) > tt.wantLen || (len(got) != tt.wantLen && !tt.cut) || len(got) < tt.wantLen-8 {
				t.Errorf("len(Flatten()) = %d, want %d", len(got), tt.wantLen)
			}
			if cut := strings.Contains(got, "…[truncated "); cut != tt.cut {
				t.Errorf("Flatten() has truncation marker = %v, want %v", cut, tt.cut)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Flatten() is not valid UTF-8")
			}
		})
	}
}

// TestFlattenCapMatchesTruncate checks that cutting a multi-block result piecewise gives the
// same text as joining it and calling Truncate.
func TestFlattenCapMatchesTruncate(t *testing.T) {
	blocks := []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("é", 300)},
		&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: strings.Repeat("€", 200)}},
		&mcp.TextContent{Text: strings.Repeat("😀", 150)},
	}
	res := &mcp.CallToolResult{Content: blocks}
	full, _ := results.Flatten(res, &results.Options{MaxBytes: -1})
	for limit := results.MinTruncateBytes; limit <= len(full)+1; limit += 7 {
		got, _ := results.Flatten(res, &results.Options{MaxBytes: limit})
		if want := results.Truncate(full, limit); got != want {
			t.Fatalf("Flatten(MaxBytes: %d) = %q, want Truncate(full) = %q", limit, got, want)
		}
	}
}

func TestParts(t *testing.T) {
	notes := &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5}
	res := &mcp.CallToolResult{
		StructuredContent: map[string]any{"ignored": true},
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hi", Annotations: notes},
			nil,
			&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("wav")},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t", MIMEType: "text/plain", Text: "txt"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte{1, 2}}},
			&mcp.EmbeddedResource{},
			&mcp.ResourceLink{URI: "demo://x", Name: "x", MIMEType: "text/plain", Size: ptr(int64(3))},
			&mcp.ResourceLink{URI: "demo://y", Name: "y"},
			//lint:ignore SA1019 tests the blocks a server may still send (see flatten.go)
			&mcp.ToolUseContent{Name: "search"},
			//lint:ignore SA1019 tests the blocks a server may still send (see flatten.go)
			&mcp.ToolResultContent{Content: []mcp.Content{&mcp.TextContent{Text: "nested"}}},
		},
	}
	want := []results.Part{
		{Kind: results.KindText, Text: "hi", Size: 2, Annotations: notes},
		{Kind: results.KindImage, MIMEType: "image/png", Data: pngBytes, Size: int64(len(pngBytes))},
		{Kind: results.KindAudio, MIMEType: "audio/wav", Data: []byte("wav"), Size: 3},
		{Kind: results.KindResource, URI: "file:///t", MIMEType: "text/plain", Text: "txt", Size: 3},
		{Kind: results.KindResource, URI: "file:///b", Data: []byte{1, 2}, Size: 2},
		{Kind: results.KindResource},
		{Kind: results.KindResourceLink, URI: "demo://x", Name: "x", MIMEType: "text/plain", Size: 3},
		{Kind: results.KindResourceLink, URI: "demo://y", Name: "y", Size: -1},
		{Kind: results.KindText, Text: "[tool use: search]", Size: 18},
		{Kind: results.KindText, Text: "nested", Size: 6},
	}
	check := func(t *testing.T, got []results.Part) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("Parts() gave %d parts, want %d: %+v", len(got), len(want), got)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Kind != w.Kind || g.Text != w.Text || g.MIMEType != w.MIMEType || string(g.Data) != string(w.Data) ||
				g.URI != w.URI || g.Name != w.Name || g.Size != w.Size || (g.Annotations == nil) != (w.Annotations == nil) {
				t.Errorf("Parts()[%d] = %+v, want %+v", i, g, w)
			}
		}
	}
	t.Run("direct", func(t *testing.T) { check(t, results.Parts(res)) })
	t.Run("server", func(t *testing.T) {
		wire := *res
		wire.Content = append(wire.Content[:1:1], wire.Content[2:]...) // no nil block on the wire
		server := mcp.NewServer(&mcp.Implementation{Name: "parts", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "parts", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return &wire, nil })
		check(t, results.Parts(call(t, connect(t, server), "parts")))
	})
	t.Run("nil", func(t *testing.T) {
		if got := results.Parts(nil); got != nil {
			t.Errorf("Parts(nil) = %v, want nil", got)
		}
	})
}
