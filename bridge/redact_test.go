package bridge_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestBareKeyAndArgumentSecretsNeverLogged connects, with a debug logger, to a stdio server
// given credential arguments (which it echoes on stderr), to a live HTTP server whose URL
// carries its secret as a bare query key, and to dead endpoints with bare-key secrets, then
// calls a tool. No log line, error or printed config may show a secret.
func TestBareKeyAndArgumentSecretsNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&buf, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secrets := []string{"arg-SECRET-1", "flag-SECRET-2", "sk-live-bare-SECRET-3", "dead-bare-SECRET-4", "hdr-SECRET-5"}

	local := stdioConfig(t, "local", "basic")
	local.Args = []string{"--api-key", secrets[0], "--token=" + secrets[1], "-H", "Authorization: Bearer " + secrets[4]}
	remote := httpConfig(t, "remote", "basic", "http", nil)
	remote.URL += "?" + secrets[2]
	cfgs := []bridge.ServerConfig{
		local,
		remote,
		{ID: "dead", Type: "http", URL: "http://127.0.0.1:1/mcp?" + secrets[3]},
		{ID: "dead-auto", URL: "http://127.0.0.1:1/mcp?a=1&" + secrets[3]},
	}
	var statusText []string
	opts := &bridge.Options{Logger: logger, OnStatus: func(_ context.Context, st bridge.ServerStatus) {
		mu.Lock()
		defer mu.Unlock()
		if st.Err != nil {
			statusText = append(statusText, st.Err.Error(), st.Err.Stderr)
		}
	}}
	tools, err := connect(t, cfgs, opts)
	if err == nil {
		t.Fatal("want errors for the dead servers")
	}
	var calls []string
	for _, tool := range tools {
		if tool.RemoteName == "fail" {
			_, cerr := tool.Handler(ctxT(t, 10*time.Second), nil)
			calls = append(calls, cerr.Error())
		}
	}
	if len(calls) != 2 {
		t.Fatalf("called %d fail tools, want one per live server: %v", len(calls), names(tools))
	}
	for _, c := range cfgs {
		logger.Info("config", "cfg", c)
	}
	mu.Lock()
	all := buf.String() + err.Error() + strings.Join(statusText, "\n") + strings.Join(calls, "\n")
	for _, c := range cfgs {
		all += c.String() + c.GoString()
	}
	mu.Unlock()
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("secret %q leaked:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "--api-key ***") || !strings.Contains(all, "mcp?***") {
		t.Errorf("the masks are missing:\n%s", all)
	}
	if !waitFor(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(buf.String(), `\"--token=***\"`)
	}) {
		t.Errorf("the fixture's echo of its arguments is not in the debug log:\n%s", buf.String())
	}
}
