package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// The npm packages the suite runs, as named in package.json.
const (
	pkgEverything     = "@modelcontextprotocol/server-everything"
	pkgFilesystem     = "@modelcontextprotocol/server-filesystem"
	pkgMemory         = "@modelcontextprotocol/server-memory"
	pkgBasicVanillaJS = "@modelcontextprotocol/server-basic-vanillajs"
	pkgSystemMonitor  = "@modelcontextprotocol/server-system-monitor"
	// pkgSequentialThinking is a sweep server pinned here too: its structured content's
	// key order (TestStructuredKeyOrder) and the result corpus (TestResultCorpus).
	pkgSequentialThinking = "@modelcontextprotocol/server-sequential-thinking"
)

var allPackages = []string{pkgEverything, pkgFilesystem, pkgMemory, pkgBasicVanillaJS, pkgSystemMonitor, pkgSequentialThinking}

// npmServers locates node and the installed npm packages.
type npmServers struct {
	node string            // absolute path of the node binary
	dir  string            // absolute path of the integration directory
	bins map[string]string // package name -> absolute path of its bin script
}

// requireServers finds node and node_modules. When either is missing the test is skipped with
// the fix, except under CI=true, where it fails: CI must never skip this suite silently.
func requireServers(t testing.TB) *npmServers {
	t.Helper()
	s, err := findServers()
	if err != nil {
		msg := fmt.Sprintf("run npm ci in integration/ (and have node on PATH): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return s
}

func findServers() (*npmServers, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("find node: %w", err)
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	s := &npmServers{node: node, dir: dir, bins: make(map[string]string)}
	for _, pkg := range allPackages {
		bin, err := packageBin(dir, pkg)
		if err != nil {
			return nil, err
		}
		s.bins[pkg] = bin
	}
	return s, nil
}

// packageBin reads node_modules/<pkg>/package.json and returns the absolute path of its single
// bin script.
func packageBin(dir, pkg string) (string, error) {
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("package %s not installed: %w", pkg, err)
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("package %s: package.json: %w", pkg, err)
	}
	var rel string
	if err := json.Unmarshal(meta.Bin, &rel); err != nil {
		var bins map[string]string
		if err := json.Unmarshal(meta.Bin, &bins); err != nil || len(bins) != 1 {
			return "", fmt.Errorf("package %s: want exactly one bin, got %s", pkg, meta.Bin)
		}
		for _, v := range bins {
			rel = v
		}
	}
	bin := filepath.Join(pkgDir, filepath.FromSlash(rel))
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("package %s: bin: %w", pkg, err)
	}
	return bin, nil
}

// stdio returns the config of a stdio server running `node <bin of pkg> args...`.
func (s *npmServers) stdio(id, pkg string, args ...string) bridge.ServerConfig {
	return bridge.ServerConfig{
		ID:      id,
		Type:    bridge.TypeStdio,
		Command: s.node,
		Args:    append([]string{s.bins[pkg]}, args...),
		Dir:     s.dir,
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 1<<20 { // keep memory bounded; the head is enough to diagnose
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProcess starts cmd in its own process group and registers a cleanup that kills the
// group and reaps the process. The returned channel receives cmd.Wait's result.
func startProcess(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		killProcessGroup(cmd)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("process %d did not exit after SIGKILL", cmd.Process.Pid)
		}
	})
	return exited
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("close probe listener: %v", err)
	}
	return port
}

// startHTTPServer runs `node <bin of pkg> args...` with PORT set to a free loopback port,
// waits until the port accepts connections and returns "http://127.0.0.1:PORT". The process
// group is killed at cleanup. A port stolen between probing and binding is retried (bounded).
func startHTTPServer(t *testing.T, s *npmServers, pkg string, args ...string) string {
	t.Helper()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		stderr := &syncBuffer{}
		cmd := exec.Command(s.node, append([]string{s.bins[pkg]}, args...)...)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		cmd.Stdout = stderr
		cmd.Stderr = stderr
		exited := startProcess(t, cmd)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err := waitForPort(addr, exited, testTimeout/2)
		if err == nil {
			return "http://" + addr
		}
		if attempt < attempts && strings.Contains(stderr.String(), "EADDRINUSE") {
			t.Logf("port %d taken, retrying: %v", port, err)
			continue
		}
		t.Fatalf("%s %v on port %d: %v\noutput:\n%s", pkg, args, port, err, stderr.String())
	}
}

// waitForPort polls addr until it accepts a TCP connection, the process exits, or timeout.
func waitForPort(addr string, exited <-chan error, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, 250*time.Millisecond)
		if err == nil {
			return conn.Close()
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("server exited before listening: %v", werr)
		case <-deadline.C:
			return fmt.Errorf("not listening after %v: %w", timeout, err)
		case <-tick.C:
		}
	}
}

// testTimeout bounds each test. It is generous because node servers start slowly on a loaded
// 2-core machine (seconds each); it only matters when something hangs.
const testTimeout = 2 * time.Minute

// testContext returns a context that ends after d (or when the test ends).
func testContext(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// testLogger returns a logger writing to t.Log that goes quiet once the test's cleanups have
// run past it, so a late log line from a background goroutine cannot panic the test binary.
// Call it before connecting: cleanups run last-in first-out, so the bridge closes first.
func testLogger(t testing.TB) *slog.Logger {
	t.Helper()
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// connect runs bridge.Connect and closes the set when the test ends. Any skipped server fails
// the test; use connectAllowingErrors to inspect skips.
func connect(t *testing.T, ctx context.Context, cfgs []bridge.ServerConfig, opts *bridge.Options) *bridge.Set {
	t.Helper()
	set := connectAllowingErrors(t, ctx, cfgs, opts)
	if f := set.Failed(); len(f) > 0 {
		t.Fatalf("Connect skipped servers: %v", f)
	}
	return set
}

// connectAllowingErrors is connect without failing on skipped servers (Set.Failed).
func connectAllowingErrors(t *testing.T, ctx context.Context, cfgs []bridge.ServerConfig, opts *bridge.Options) *bridge.Set {
	t.Helper()
	o := bridge.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = testLogger(t)
	}
	set, err := bridge.Connect(ctx, cfgs, &o)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if cerr := set.Close(); cerr != nil {
			t.Errorf("Set.Close: %v", cerr)
		}
	})
	return set
}

// failedErr joins the set's skipped servers' errors (nil when none was skipped).
func failedErr(set *bridge.Set) error {
	var errs []error
	for _, e := range set.Failed() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// findTool returns the tool of server serverID whose remote name is remote.
func findTool(t *testing.T, tools bridge.Tools, serverID, remote string) bridge.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.RemoteName == remote && tool.Server != nil && tool.Server.ID() == serverID {
			return tool
		}
	}
	t.Fatalf("no tool %q from server %q among %v", remote, serverID, toolNames(tools))
	return bridge.Tool{}
}

// hasRemote reports whether serverID offers the model a tool named remote on the server.
func hasRemote(tools bridge.Tools, serverID, remote string) bool {
	for _, tool := range tools {
		if tool.RemoteName == remote && tool.Server != nil && tool.Server.ID() == serverID {
			return true
		}
	}
	return false
}

func toolNames(tools bridge.Tools) []string {
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	return names
}

// serverErrors returns every *bridge.ServerError in err's tree, in order.
func serverErrors(err error) []*bridge.ServerError {
	var out []*bridge.ServerError
	var walk func(error, int)
	walk = func(err error, depth int) {
		if err == nil || depth > 16 {
			return
		}
		if se, ok := err.(*bridge.ServerError); ok {
			out = append(out, se)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, depth+1)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap(), depth+1)
		}
	}
	walk(err, 0)
	return out
}

// mustJSON is json.Marshal for test inputs that cannot fail.
func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// errorsAsType is errors.As returning the target.
func errorsAsType[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}
