package bridge_test

import (
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/results"
)

// unknownContentResult is the raw fixture's "video" result: blocks of types this version
// does not know between text blocks (go-sdk's decoder refuses them).
const unknownContentResult = `{"content":[{"type":"text","text":"before"},{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"},{"type":"tool_result","toolUseId":"u","content":[{"type":"hologram","size":12}]},{"type":"text","text":"after"}]}`

// TestUnknownContentPlaceholder: a stdio server's result with content blocks of unknown
// types does not fail the call: the model reads placeholders between the text blocks, and
// a host gets typed parts with the raw blocks.
func TestUnknownContentPlaceholder(t *testing.T) {
	tools, err := connect(t, []bridge.ServerConfig{rawConfig(t, "v", "video", newProcLog(t))}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	inv, err := byName(t, tools, "video").Invoke(ctxT(t, 30*time.Second), nil)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if want := "before\n[video: video/mp4, 6 B]\n[tool result]\n[hologram: 12 B]\nafter"; inv.Text != want {
		t.Errorf("text = %q, want %q", inv.Text, want)
	}
	var raws []string
	for _, p := range results.Parts(inv.Result) {
		if p.Kind == results.KindUnknown {
			raws = append(raws, p.Type+" "+string(p.Raw))
		}
	}
	want := []string{`video {"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"}`, `hologram {"type":"hologram","size":12}`}
	if len(raws) != len(want) || raws[0] != want[0] || raws[1] != want[1] {
		t.Errorf("unknown parts = %q, want %q", raws, want)
	}
}
