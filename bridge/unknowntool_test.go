package bridge_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

// ErrUnknownTool is what its doc says: a Handler or Invoke call of a RemoteName the server
// never listed, refused without contacting the server (kind unknown_tool); Set.Proxy refuses
// such a tool with apps.ErrToolNotAllowed instead.
func TestUnknownToolAsDocumented(t *testing.T) {
	var hs hookServer
	var audit auditLog
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{Logger: discard(), AfterCall: audit.after})
	if err != nil {
		t.Fatal(err)
	}
	tool := byName(t, set.Tools(), "read_file")
	tool.RemoteName = "never_listed"
	_, err = tool.Invoke(ctxT(t, 30*time.Second), json.RawMessage(`{}`))
	_, end := audit.last(t)
	if !errors.Is(err, bridge.ErrUnknownTool) || end.Outcome != bridge.OutcomeUnknownTool || hs.calls.Load() != 0 {
		t.Errorf("Invoke of an unlisted tool: %v (kind %q, %d server calls), want ErrUnknownTool and no call", err, end.Outcome, hs.calls.Load())
	}
	_, err = set.Proxy(ctxT(t, 30*time.Second), apps.ProxyRequest{ServerID: "files", Method: "tools/call", Params: json.RawMessage(`{"name":"never_listed"}`)})
	if !errors.Is(err, apps.ErrToolNotAllowed) || errors.Is(err, bridge.ErrUnknownTool) {
		t.Errorf("Proxy of an unlisted tool: %v, want apps.ErrToolNotAllowed", err)
	}
}
