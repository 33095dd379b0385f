package serve_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/integration/internal/browsertest"
	"github.com/ttalk/mcpbridge/internal/serve/servetest"
)

// TestBrowserFixture drives the page in headless Chromium against a go-sdk server whose App
// is written to the MCP Apps spec by hand: token redirect, form call, text never as HTML,
// the View's handshake, input and result, CSP and isolation, App calls through the proxy
// (an app-only tool allowed, a model-only tool refused), resources/read, open-link, message.
func TestBrowserFixture(t *testing.T) {
	ctx := browsertest.New(t)
	h := servetest.StartHost(t, []bridge.ServerConfig{{ID: "fixture", URL: servetest.FixtureServer(t, nil)}})

	browsertest.Do(t, ctx, "open without token", chromedp.Navigate(h.Origin()+"/"))
	browsertest.Poll(t, ctx, "refusal", `document.body.innerText.includes("missing or wrong token")`)

	browsertest.Do(t, ctx, "open", chromedp.Navigate(h.URL()))
	browsertest.Poll(t, ctx, "server list", `document.querySelectorAll(".server").length === 1`)
	if loc := browsertest.Eval[string](t, ctx, `location.href`); loc != h.Origin()+"/" {
		t.Errorf("after the token redirect the page is at %s", loc)
	}

	// An ordinary tool from the form; server text is shown as text, never as HTML.
	browsertest.Do(t, ctx, "pick greet", chromedp.Click(chromedp.CSS(`[data-tool="greet"]`)))
	browsertest.Poll(t, ctx, "form", `document.querySelector("#f-0") !== null`)
	browsertest.Do(t, ctx, "fill", chromedp.SetValue(chromedp.CSS(`#f-0`), "<i>Ada</i>"), chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, ctx, "model text", `(document.querySelector("#model-text")||{}).textContent?.includes("hello <i>Ada</i>")`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#workbench img, #workbench i").length`); n != 0 {
		t.Errorf("server text became %d HTML elements", n)
	}
	browsertest.Screenshot(t, ctx, "fixture-greet")

	// The App tool: the View renders in the sandbox and gets input and result.
	browsertest.Do(t, ctx, "pick counter", chromedp.Click(chromedp.CSS(`[data-tool="counter"]`)))
	browsertest.Poll(t, ctx, "call button", `document.querySelector("#call") !== null && document.querySelector("h2 code").textContent === "counter"`)
	browsertest.Do(t, ctx, "call counter", chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, ctx, "App frame", `document.querySelector("iframe.view") !== null`)
	view, _ := browsertest.View(t, ctx)
	view.Poll("tool result in the View", `document.querySelector("#count").textContent === "1"`)
	view.Poll("host info", `document.querySelector("#host").textContent === "mcpbridge 2026-01-26 counter"`)
	view.Poll("tool input", `document.querySelector("#input").textContent === "{}"`)
	view.Poll("CSP", `document.querySelector("#csp").textContent === "blocked connect-src"`)
	view.Poll("isolation", `document.querySelector("#parent").textContent === "unreachable"`)
	browsertest.Poll(t, ctx, "size change", `document.querySelector("iframe.view").style.height === "420px"`)

	view.Click("refresh", `#refresh`)
	view.Poll("refreshed count", `document.querySelector("#count").textContent === "2" && document.querySelector("#refreshed").textContent === "refreshed"`)
	browsertest.Poll(t, ctx, "proxy log", `document.querySelector("#app-log").textContent.includes("tools/call bump → ok")`)

	view.Click("call the model-only tool", `#secret`)
	view.Poll("refusal", `document.querySelector("#secret-out").textContent.startsWith("refused: ")`)
	browsertest.Poll(t, ctx, "refusal logged", `document.querySelector("#app-log").textContent.includes("tools/call secret → refused (403)")`)

	view.Click("read", `#read`)
	view.Poll("resource read", `document.querySelector("#read-out").textContent.startsWith("read ")`)

	view.Click("link and message", `#link`, `#message`)
	browsertest.Poll(t, ctx, "link notice", `[...document.querySelectorAll(".notice a")].some(a => a.href === "https://example.com/docs")`)
	browsertest.Poll(t, ctx, "message notice", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("<b>hello</b> from the App"))`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll(".notice b").length`); n != 0 {
		t.Error("an App message became HTML")
	}
	browsertest.Screenshot(t, ctx, "fixture-app")

	// Display modes: fullscreen (declared) is granted and announced; pip (not declared, not
	// offered) is not.
	view.Click("fullscreen", `#fullscreen`)
	view.Poll("fullscreen granted", `document.querySelector("#mode").textContent === "fullscreen" && document.querySelector("#ctx-mode").textContent === "fullscreen"`)
	browsertest.Poll(t, ctx, "fullscreen shown", `document.querySelector(".app-view").classList.contains("fullscreen")`)
	view.Click("pip", `#pip`)
	view.Poll("pip refused", `document.querySelector("#mode").textContent === "fullscreen"`)
	view.Click("model context", `#context`)
	browsertest.Poll(t, ctx, "model context shown", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("the count is <u>shown</u>"))`)

	// Closing sends ui/resource-teardown and waits for the View's answer.
	browsertest.Do(t, ctx, "close", chromedp.Click(chromedp.CSS(`.app-view header button`)))
	browsertest.Poll(t, ctx, "closed after the View's answer", `document.querySelector(".app-view") === null && document.querySelector(".app-closed").textContent.includes("acknowledged")`)

	// The search box ranks the tools with the Set's index; token costs and the server's
	// instructions are shown, the instructions as text.
	browsertest.Do(t, ctx, "search", chromedp.SendKeys(chromedp.CSS(`#search`), "say hello to someone"))
	browsertest.Poll(t, ctx, "search hit", `document.querySelector("#hits li button code")?.textContent === "greet"`)
	browsertest.Poll(t, ctx, "token counts", `document.querySelector(".tool .tokens") !== null && document.querySelector("#summary").textContent.includes("tokens of definitions")`)
	if !browsertest.Eval[bool](t, ctx, `document.querySelector(".instructions pre").textContent.includes("<script>alert(1)</script>") && document.querySelectorAll(".instructions script").length === 0`) {
		t.Error("the server's instructions are not shown as text")
	}
	browsertest.Do(t, ctx, "pick the hit", chromedp.Click(chromedp.CSS(`#hits li button`)))
	browsertest.Poll(t, ctx, "hit opens the tool", `document.querySelector("h2 code")?.textContent === "greet"`)
}

// In the browser: a tool that runs as a task shows its status while it runs and a form for
// the server's request for input; answering it completes the call.
func TestBrowserTaskInput(t *testing.T) {
	ctx := browsertest.New(t)
	h := servetest.StartAskHost(t)
	browsertest.Do(t, ctx, "open", chromedp.Navigate(h.URL()))
	browsertest.Poll(t, ctx, "server list", `document.querySelectorAll(".server").length === 1`)
	browsertest.Do(t, ctx, "pick greet-later", chromedp.Click(chromedp.CSS(`[data-tool="greet-later"]`)))
	browsertest.Poll(t, ctx, "call button", `document.querySelector("#call") !== null`)
	browsertest.Do(t, ctx, "call", chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, ctx, "request for input", `(document.querySelector("#input-message")||{}).textContent === "Whom shall I greet?"`)
	browsertest.Poll(t, ctx, "task status", `document.querySelector("#call-lines").textContent.includes('task "greet-1": input_required: who is it?')`)
	browsertest.Screenshot(t, ctx, "task-input")
	browsertest.Do(t, ctx, "answer", chromedp.SetValue(chromedp.CSS(`#e-0`), "Ada"), chromedp.Click(chromedp.CSS(`#input-accept`)))
	browsertest.Poll(t, ctx, "result", `(document.querySelector("#model-text")||{}).textContent === "hello accept:Ada"`)
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll(".input-request").length`); n != 0 {
		t.Errorf("%d input forms left after the call", n)
	}
}
