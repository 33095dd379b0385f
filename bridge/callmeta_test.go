package bridge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// BeforeCall sees the annotations the host's Tool carries for the tools that expose
// resources and prompts (read-only, closed world), so the README's approval policy lets
// those reads through without asking a person.
func TestExposedToolsCarryAnnotationsToHooks(t *testing.T) {
	docs := inProcess("docs", docsServer(true))
	docs.Expose = []string{bridge.ExposeResources, bridge.ExposePrompts}
	var asked []string
	var mu sync.Mutex
	opts := &bridge.Options{Logger: discard(), BeforeCall: func(_ context.Context, c *bridge.Call) error {
		if a := c.Annotations; a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint)) {
			return nil // reads go ahead (the README's policy)
		}
		mu.Lock()
		asked = append(asked, c.Tool)
		mu.Unlock()
		return bridge.Deny("a person must approve " + c.Tool)
	}}
	set, err := connectSet(t, []bridge.ServerConfig{docs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"docs__list_resources", "docs__list_prompts"} {
		tool := byName(t, set.Tools(), name)
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint {
			t.Fatalf("%s: Tool.Annotations = %+v, want read-only", name, a)
		}
		if _, err := tool.Handler(ctxT(t, 30*time.Second), nil); err != nil {
			t.Errorf("%s: %v, want the read to go ahead", name, err)
		}
	}
	if len(asked) > 0 {
		t.Errorf("BeforeCall asked a person for %v: it saw no read-only annotation", asked)
	}
}
