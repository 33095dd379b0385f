// Package browsertest drives headless Chromium from Go tests (through chromedp) for the
// tests of mcpbridge serve. Only test files import it.
//
// Chromium is found on PATH (Debian's chromium package; .ci/run installs it). When it is
// missing the test is skipped, except under CI=true, where it fails: CI must never skip the
// browser tests silently.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Timeout bounds each wait; generous, as tests share a small, loaded machine.
const Timeout = 90 * time.Second

// Chromium returns the path of a Chromium or Chrome binary, or skips (fails under CI=true).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (.ci/run installs Debian's chromium)")
	}
	t.Skip("no chromium on PATH; install it (Debian: apt-get install chromium) to run the browser tests")
	return ""
}

// New starts headless Chromium for the test and returns the context of its first tab. Site
// isolation stays on, as users have it: MCP App Views (sandboxed srcdoc frames) then run as
// their own targets, which View attaches a session to. The browser is stopped when the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.NoSandbox, // CI runs as root; the iframe sandbox attribute is unaffected
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// Poll waits until the JavaScript expression is truthy in ctx's frame.
func Poll(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(Timeout))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// Eval evaluates expr in ctx's frame and decodes its value.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Do runs actions, failing the test with what on error.
func Do(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Screenshot writes a PNG of the tab's viewport to artifacts/<name>.png under the test's
// package directory (gitignored), for people to look at; failures are only logged.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := "artifacts"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}
