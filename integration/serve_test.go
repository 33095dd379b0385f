package integration

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/integration/internal/browsertest"
	"github.com/ttalk/mcpbridge/internal/serve"
)

// yamlServers loads servers.yaml and runs each npx-launched package from node_modules (the
// same pinned version npx would fetch), so the test needs no registry and no npx start-up.
func yamlServers(t *testing.T, s *npmServers) []bridge.ServerConfig {
	t.Helper()
	cfgs, err := bridge.LoadConfig("servers.yaml")
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	for i, c := range cfgs {
		if c.Command != "npx" || len(c.Args) < 2 || c.Args[0] != "-y" {
			t.Fatalf("servers.yaml: server %s is not started with npx -y: %v", c.ID, c)
		}
		pkg := c.Args[1][:strings.LastIndex(c.Args[1], "@")]
		bin, ok := s.bins[pkg]
		if !ok {
			t.Fatalf("servers.yaml: server %s runs %s, which package.json does not pin", c.ID, pkg)
		}
		cfgs[i].Command = s.node
		cfgs[i].Args = append([]string{bin}, c.Args[2:]...)
		cfgs[i].Dir = s.dir
		if _, ok := c.Env["MEMORY_FILE_PATH"]; ok {
			cfgs[i].Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}
		}
	}
	return cfgs
}

// TestServe runs mcpbridge serve's page against the five servers of servers.yaml in headless
// Chromium: the page lists them; get-time of server-basic-vanillajs renders its App, which
// shows the time, and a click on the App's own button makes a tools/call through the proxy
// that updates it, and its message, log and link controls reach the page; server-system-monitor's App polls its app-only poll-system-stats through
// the proxy; the App's attempt to call another server's tool is refused; requests without the
// token, from another origin or to another host name are refused. Screenshots go to
// artifacts/.
func TestServe(t *testing.T) {
	s := requireServers(t)
	ctx := testContext(t, testTimeout)
	cfgs := yamlServers(t, s)
	var ids []string
	for _, c := range cfgs {
		ids = append(ids, c.ID)
	}
	set := connectAllowingErrors(t, ctx, cfgs, nil)
	t.Cleanup(func() { _ = set.Close() })
	if f := set.Failed(); len(f) > 0 {
		t.Fatalf("servers failed: %v", f)
	}
	h, err := serve.Listen(serve.Options{Set: set, Order: ids, Version: "integration", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.Serve(sctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name, path, host, origin string
			token                    bool
			status                   int
		}{
			{"no token", "/api/servers", "", "", false, http.StatusUnauthorized},
			{"wrong token", "/api/servers?token=nope", "", "", false, http.StatusUnauthorized},
			{"rebound host name", "/api/servers", "attacker.example:80", "", true, http.StatusMisdirectedRequest},
			{"other origin", "/api/servers", "", "http://attacker.example", true, http.StatusForbidden},
			{"token", "/api/servers", "", "", true, http.StatusOK},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.Origin()+tt.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tt.host != "" {
					req.Host = tt.host
				}
				if tt.origin != "" {
					req.Header.Set("Origin", tt.origin)
				}
				if tt.token {
					tok := h.URL()[strings.Index(h.URL(), "token=")+len("token="):]
					req.URL.RawQuery = "token=" + tok
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("GET %s = %d %s, want %d", tt.path, resp.StatusCode, body, tt.status)
				}
			})
		}
	})

	b := browsertest.New(t)
	browsertest.Do(t, b, "open without token", chromedp.Navigate(h.Origin()+"/"))
	browsertest.Poll(t, b, "refusal", `document.body.innerText.includes("missing or wrong token")`)
	browsertest.Do(t, b, "open", chromedp.Navigate(h.URL()))
	browsertest.Poll(t, b, "five servers", `document.querySelectorAll(".server .badge.ok").length === 5`)
	listed := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll(".server")].map(e => e.dataset.server)`)
	if !slices.Equal(listed, ids) {
		t.Errorf("page lists %v, want %v", listed, ids)
	}
	browsertest.Poll(t, b, "app-only tool marked", `document.querySelector('[data-server="system-monitor"] [data-tool="poll-system-stats"] .badge.apponly') !== null`)
	browsertest.Screenshot(t, b, "serve-servers")

	// basic-vanillajs: get-time renders the App, which shows the time; its own button
	// refreshes it through the proxy.
	browsertest.Do(t, b, "pick get-time", chromedp.Click(chromedp.CSS(`[data-server="basic-vanillajs"] [data-tool="get-time"]`)))
	browsertest.Poll(t, b, "call button", `document.querySelector("#call") !== null && document.querySelector("h2 code").textContent === "get-time"`)
	browsertest.Do(t, b, "call get-time", chromedp.Click(chromedp.CSS(`#call`)))
	browsertest.Poll(t, b, "model text", `/^\d{4}-\d\d-\d\dT/.test((document.querySelector("#model-text")||{}).textContent)`)
	view, first := browsertest.View(t, b)
	isoTime := `/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(document.querySelector("#server-time").textContent)`
	view.Poll("the App shows the time", isoTime)
	shown := browsertest.EvalView[string](view, `document.querySelector("#server-time").textContent`)
	browsertest.Screenshot(t, b, "serve-basic-vanillajs")
	view.Click("click the App's refresh button", `#get-time-btn`)
	browsertest.Poll(t, b, "tools/call through the proxy", `document.querySelector("#app-log").textContent.includes("tools/call get-time → ok")`)
	view.Poll("the App shows a new time", isoTime+` && document.querySelector("#server-time").textContent !== `+jsString(shown))

	// The App's other controls: ui/message, notifications/message, ui/open-link.
	view.Click("send message, log, link", `#send-message-btn`, `#send-log-btn`, `#open-link-btn`)
	browsertest.Poll(t, b, "message shown", `[...document.querySelectorAll(".notice")].some(n => n.textContent.includes("This is message text."))`)
	browsertest.Poll(t, b, "log shown", `document.querySelector("#app-log").textContent.includes("This is log text.")`)
	browsertest.Poll(t, b, "link offered", `[...document.querySelectorAll(".notice a")].some(a => a.href === "https://modelcontextprotocol.io/")`)

	// An App may only reach its own server: a tools/call for another server's tool, sent
	// from inside the View, is refused by the proxy.
	refusal := browsertest.EvalView[string](view, `new Promise((resolve) => {
		const id = "cross-server-1";
		addEventListener("message", (ev) => { if (ev.data && ev.data.id === id) resolve(ev.data.error ? "refused: " + ev.data.error.message : "allowed"); });
		parent.postMessage({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } }, "*");
	})`)
	if !strings.HasPrefix(refusal, "refused: ") || !strings.Contains(refusal, "not callable by apps") {
		t.Errorf("cross-server tools/call from the App: %s", refusal)
	}

	// system-monitor: get-system-info renders the App, which polls the app-only
	// poll-system-stats through the proxy.
	browsertest.Do(t, b, "pick get-system-info", chromedp.Click(chromedp.CSS(`[data-server="system-monitor"] [data-tool="get-system-info"]`)))
	browsertest.Poll(t, b, "call button", `document.querySelector("#call") !== null && document.querySelector("h2 code").textContent === "get-system-info"`)
	browsertest.Do(t, b, "call get-system-info", chromedp.Click(chromedp.CSS(`#call`)))
	monitor, _ := browsertest.View(t, b, first)
	console := monitor.Console
	defer func() {
		for _, l := range console() {
			if strings.HasPrefix(l, "error") || strings.HasPrefix(l, "exception") {
				t.Logf("system-monitor View console: %s", l)
			}
		}
	}()
	browsertest.Poll(t, b, "two polls through the proxy", `(document.querySelector("#app-log").textContent.match(/tools\/call poll-system-stats → ok/g) || []).length >= 2`)
	monitor.Poll("the App shows memory use", `/^\d+%$/.test(document.querySelector("#memory-percent").textContent)`)
	browsertest.Screenshot(t, b, "serve-system-monitor")
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("#app-log li.bad").length`); n != 0 {
		t.Errorf("the host refused %d of the system monitor's requests: %s", n, browsertest.Eval[string](t, b, `document.querySelector("#app-log").textContent`))
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}
