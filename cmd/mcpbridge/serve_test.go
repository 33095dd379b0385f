package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingRE = regexp.MustCompile(`serving 2 servers on (http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{64})   \(Ctrl-C to stop\)`)

// serve prints the page's URL with the token, serves the servers of the file (secrets never
// on the page), refuses requests without the token, and stops cleanly on Ctrl-C (ctx).
func TestServe(t *testing.T) {
	f := writeFixture(t, "mcphost.yaml", true)
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", f.path, "--addr", "127.0.0.1:0"}, &stdout, &stderr) }()
	stopped := false
	stop := func() error {
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not stop within 30s of Ctrl-C")
			return nil
		}
	}
	t.Cleanup(func() {
		if !stopped {
			_ = stop()
		}
	})

	var m []string
	for deadline := time.Now().Add(60 * time.Second); m == nil; {
		if m = servingRE.FindStringSubmatch(stdout.String()); m != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving line; stdout %q stderr %q", stdout.String(), stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended early: %v; stderr %s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	origin, token := m[1], m[2]
	get := func(path string) (int, string) {
		resp, err := http.Get(origin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/api/servers"); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	code, body := get("/api/servers?token=" + token)
	if code != http.StatusOK || !strings.Contains(body, `"id":"local"`) || !strings.Contains(body, `"id":"remote"`) {
		t.Errorf("with the token: %d %s", code, body)
	}
	for _, s := range secrets {
		if strings.Contains(body, s) || strings.Contains(stdout.String(), s) || strings.Contains(stderr.String(), s) {
			t.Errorf("secret %q shown", s)
		}
	}
	if err := stop(); err != nil {
		t.Errorf("serve after Ctrl-C: %v (want nil, exit 0)", err)
	}
	if _, err := http.Get(origin + "/"); err == nil {
		t.Error("the page still answers after serve stopped")
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	f := writeFixture(t, "mcphost.yaml", true)
	_, stderr, code := runCLI(t, "serve", f.path, "--addr", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(stderr, "not a loopback") {
		t.Errorf("serve --addr 0.0.0.0:0: exit %d, stderr %s", code, stderr)
	}
}
