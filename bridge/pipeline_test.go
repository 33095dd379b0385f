package bridge_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
)

// Every origin's call gets one deadline, set when the call starts: the call timeout from
// then, whatever the caller's ctx allows. BeforeCall's ctx carries it.
func TestOneDeadlinePerCallForEveryOrigin(t *testing.T) {
	const timeout = 7 * time.Minute
	var hs hookServer
	var deadline time.Time
	set, err := connectSet(t, []bridge.ServerConfig{hs.inProcess("files")}, &bridge.Options{
		Logger:      discard(),
		CallTimeout: timeout,
		BeforeCall: func(ctx context.Context, _ *bridge.Call) error {
			deadline, _ = ctx.Deadline()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := set.Lookup("files")
	ctx := context.Background() // no deadline of the caller's
	calls := []struct {
		origin string
		call   func() error
	}{
		{"handler", func() error {
			_, err := byName(t, set.Tools(), "read_file").Handler(ctx, json.RawMessage(`{}`))
			return err
		}},
		{"call_tool", func() error { _, err := srv.CallTool(ctx, "read_file", nil); return err }},
		{"app", func() error {
			_, err := set.Proxy(ctx, apps.ProxyRequest{ServerID: "files", Method: "tools/call", Params: json.RawMessage(`{"name":"app_refresh"}`)})
			return err
		}},
	}
	for _, c := range calls {
		deadline = time.Time{}
		before := time.Now()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.origin, err)
		}
		after := time.Now()
		if deadline.Before(before.Add(timeout)) || deadline.After(after.Add(timeout)) {
			t.Errorf("%s: BeforeCall's deadline %v, want the call timeout from the call's start (between %v and %v)",
				c.origin, deadline, before.Add(timeout), after.Add(timeout))
		}
	}
}
