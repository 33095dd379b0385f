package serve_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ttalk/mcpbridge/bridge"
)

// chromium finds a Chromium or Chrome binary; under CI=true a missing one fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (.ci/run installs Debian's chromium)")
	}
	t.Skip("no chromium on PATH; install it to run the browser tests")
	return ""
}

// newBrowser starts headless Chromium for the test (site isolation on, as users have it).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // root in CI; the iframe sandbox attribute is unaffected
		chromedp.WindowSize(1280, 1000),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// viewContext attaches to the View's frame: a sandboxed srcdoc iframe, which Chromium runs
// in its own process (a target of type "iframe").
func viewContext(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			t.Logf("target %s %s", info.Type, info.URL)
		}
		for _, info := range infos {
			if info.Type == "iframe" && info.URL == "about:srcdoc" {
				vctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				return vctx
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("no View frame appeared")
	return nil
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join("testdata", "artifacts")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
}

// poll waits until the JavaScript expression is truthy in ctx's frame.
func poll(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestBrowserFixture(t *testing.T) {
	ctx := newBrowser(t)
	h := startHost(t, []bridge.ServerConfig{{ID: "fixture", URL: fixtureServer(t, nil)}})

	do(t, ctx, "open without token", chromedp.Navigate(h.Origin()+"/"))
	poll(t, ctx, "refusal", `document.body.innerText.includes("missing or wrong token")`)

	do(t, ctx, "open", chromedp.Navigate(h.URL()))
	poll(t, ctx, "server list", `document.querySelectorAll(".server").length === 1`)
	if loc := eval[string](t, ctx, `location.href`); loc != h.Origin()+"/" {
		t.Errorf("after the token redirect the page is at %s", loc)
	}

	// An ordinary tool from the form; server text is shown as text, never as HTML.
	do(t, ctx, "pick greet", chromedp.Click(chromedp.CSS(`[data-tool="greet"]`)))
	poll(t, ctx, "form", `document.querySelector("#f-0") !== null`)
	do(t, ctx, "fill", chromedp.SetValue(chromedp.CSS(`#f-0`), "<i>Ada</i>"), chromedp.Click(chromedp.CSS(`#call`)))
	poll(t, ctx, "model text", `(document.querySelector("#model-text")||{}).textContent?.includes("hello <i>Ada</i>")`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#workbench img, #workbench i").length`); n != 0 {
		t.Errorf("server text became %d HTML elements", n)
	}
	screenshot(t, ctx, "fixture-greet")

	// The App tool: the View renders in the sandbox and gets input and result.
	do(t, ctx, "pick counter", chromedp.Click(chromedp.CSS(`[data-tool="counter"]`)))
	poll(t, ctx, "call button", `document.querySelector("#call") !== null && document.querySelector("h2 code").textContent === "counter"`)
	do(t, ctx, "call counter", chromedp.Click(chromedp.CSS(`#call`)))
	poll(t, ctx, "App frame", `document.querySelector("iframe.view") !== null`)
	view := viewContext(t, ctx)
	poll(t, view, "tool result in the View", `document.querySelector("#count").textContent === "1"`)
	poll(t, view, "host info", `document.querySelector("#host").textContent === "mcpbridge 2026-01-26 counter"`)
	poll(t, view, "tool input", `document.querySelector("#input").textContent === "{}"`)
	poll(t, view, "CSP", `document.querySelector("#csp").textContent === "blocked connect-src"`)
	poll(t, view, "isolation", `document.querySelector("#parent").textContent === "unreachable"`)
	poll(t, ctx, "size change", `document.querySelector("iframe.view").style.height === "420px"`)

	do(t, view, "refresh", chromedp.Click(chromedp.CSS(`#refresh`)))
	poll(t, view, "refreshed count", `document.querySelector("#count").textContent === "2" && document.querySelector("#refreshed").textContent === "refreshed"`)
	poll(t, ctx, "proxy log", `document.querySelector("#app-log").textContent.includes("tools/call bump → ok")`)

	do(t, view, "call the model-only tool", chromedp.Click(chromedp.CSS(`#secret`)))
	poll(t, view, "refusal", `document.querySelector("#secret-out").textContent.startsWith("refused: ")`)
	poll(t, ctx, "refusal logged", `document.querySelector("#app-log").textContent.includes("tools/call secret → refused (403)")`)

	do(t, view, "read", chromedp.Click(chromedp.CSS(`#read`)))
	poll(t, view, "resource read", `document.querySelector("#read-out").textContent.startsWith("read ")`)

	do(t, view, "link and message", chromedp.Click(chromedp.CSS(`#link`)), chromedp.Click(chromedp.CSS(`#message`)))
	poll(t, ctx, "link notice", `[...document.querySelectorAll(".notice a")].some(a => a.href === "https://example.com/docs")`)
	poll(t, ctx, "message notice", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("<b>hello</b> from the App"))`)
	if n := eval[int](t, ctx, `document.querySelectorAll(".notice b").length`); n != 0 {
		t.Error("an App message became HTML")
	}
	screenshot(t, ctx, "fixture-app")
}
