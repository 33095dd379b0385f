package serve_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/serve"
)

func token(h *serve.Host) string {
	u, _ := url.Parse(h.URL())
	return u.Query().Get("token")
}

func send(t *testing.T, method, target string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestGuard(t *testing.T) {
	h := startHost(t, []bridge.ServerConfig{{ID: "fixture", URL: fixtureServer(t, nil)}})
	origin := h.Origin()
	host := strings.TrimPrefix(origin, "http://")
	port := host[strings.LastIndex(host, ":")+1:]
	cookie := "mcpbridge_token_" + port + "=" + token(h)
	proxyBody := `{"serverId":"fixture","method":"ping"}`
	tests := []struct {
		name         string
		method, path string
		hdr          map[string]string
		body         string
		status       int
	}{
		{"no token", "GET", "/", nil, "", 401},
		{"no token, API", "GET", "/api/servers", nil, "", 401},
		{"wrong token", "GET", "/api/servers?token=x" + token(h)[1:], nil, "", 401},
		{"wrong cookie", "GET", "/api/servers", map[string]string{"Cookie": "mcpbridge_token_" + port + "=nope"}, "", 401},
		{"cookie of another port", "GET", "/api/servers", map[string]string{"Cookie": "mcpbridge_token_1=" + token(h)}, "", 401},
		{"cookie", "GET", "/api/servers", map[string]string{"Cookie": cookie}, "", 200},
		{"localhost", "GET", "/api/servers", map[string]string{"Cookie": cookie, "Host": "localhost:" + port}, "", 200},
		{"rebound name", "GET", "/api/servers", map[string]string{"Cookie": cookie, "Host": "evil.example:" + port}, "", 421},
		{"other port", "GET", "/api/servers", map[string]string{"Cookie": cookie, "Host": "127.0.0.1:1"}, "", 421},
		{"cross-site origin", "POST", "/api/proxy", map[string]string{"Cookie": cookie, "Origin": "https://evil.example", "Content-Type": "application/json"}, proxyBody, 403},
		{"sandbox origin", "POST", "/api/proxy", map[string]string{"Cookie": cookie, "Origin": h.SandboxOrigin(), "Content-Type": "application/json"}, proxyBody, 403},
		{"opaque origin", "POST", "/api/proxy", map[string]string{"Cookie": cookie, "Origin": "null", "Content-Type": "application/json"}, proxyBody, 403},
		{"same-site fetch", "GET", "/api/servers", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "same-site"}, "", 403},
		{"same-origin fetch", "POST", "/api/proxy", map[string]string{"Cookie": cookie, "Origin": origin, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, proxyBody, 200},
		{"typed URL", "GET", "/", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "none"}, "", 200},
		{"proxy needs JSON", "POST", "/api/proxy", map[string]string{"Cookie": cookie, "Content-Type": "text/plain"}, proxyBody, 415},
		{"call needs JSON", "POST", "/api/call", map[string]string{"Cookie": cookie, "Content-Type": "text/plain"}, `{}`, 415},
		{"GET of the proxy", "GET", "/api/proxy", map[string]string{"Cookie": cookie}, "", 405},
		{"unknown path", "GET", "/etc/passwd", map[string]string{"Cookie": cookie}, "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, tt.method, origin+tt.path, tt.hdr, tt.body)
			if resp.StatusCode != tt.status {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, body, tt.status)
			}
			if strings.Contains(body, token(h)) {
				t.Errorf("the response carries the token")
			}
		})
	}

	t.Run("token in the URL becomes a cookie", func(t *testing.T) {
		resp, _ := send(t, "GET", h.URL(), nil, "")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("GET with token = %d, Location %q; want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
		}
		c := resp.Cookies()
		if len(c) != 1 || c[0].Value != token(h) || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" {
			t.Errorf("cookie %+v: want the token, HttpOnly, SameSite=Strict, Path=/", c)
		}
	})

	t.Run("page headers", func(t *testing.T) {
		resp, body := send(t, "GET", origin+"/", map[string]string{"Cookie": cookie}, "")
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-src " + h.SandboxOrigin(), "frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("page CSP %q lacks %q", csp, want)
			}
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(body, `<script src="/host.js"`) {
			t.Errorf("page: %v\n%s", resp.Header, body)
		}
	})
}

func TestSandbox(t *testing.T) {
	h := startHost(t, []bridge.ServerConfig{{ID: "fixture", URL: fixtureServer(t, nil)}})
	sb := h.SandboxOrigin()
	csp := url.QueryEscape(`{"connectDomains":["https://api.example.com","*"],"resourceDomains":["https://cdn.example.com; script-src *"]}`)
	resp, body := send(t, "GET", sb+"/sandbox?csp="+csp, nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("sandbox = %d %s", resp.StatusCode, body)
	}
	got := resp.Header.Get("Content-Security-Policy")
	want := "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src https://api.example.com; frame-src 'none'; object-src 'none'; base-uri 'self'; frame-ancestors " + h.Origin() + " " + sb
	if got != want {
		t.Errorf("sandbox CSP\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(body, `content="`+h.Origin()+`"`) || !strings.Contains(body, `<script src="/sandbox.js">`) {
		t.Errorf("sandbox page:\n%s", body)
	}
	if resp, _ := send(t, "GET", sb+"/sandbox.js", nil, ""); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") {
		t.Errorf("sandbox.js = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := send(t, "GET", sb+"/sandbox", map[string]string{"Host": "evil.example"}, ""); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("sandbox under another host name = %d", resp.StatusCode)
	}
	for _, p := range []string{"/", "/api/servers", "/host.js"} {
		if resp, _ := send(t, "GET", sb+p, nil, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("sandbox origin serves %s: %d", p, resp.StatusCode)
		}
	}
}

func TestAPI(t *testing.T) {
	h := startHost(t, []bridge.ServerConfig{
		{ID: "fixture", URL: fixtureServer(t, nil)},
		{ID: "gone", Command: "mcpbridge-serve-test-no-such-command"},
	})
	hdr := map[string]string{"Cookie": "mcpbridge_token_" + h.Origin()[strings.LastIndex(h.Origin(), ":")+1:] + "=" + token(h), "Content-Type": "application/json"}

	t.Run("servers", func(t *testing.T) {
		resp, body := send(t, "GET", h.Origin()+"/api/servers", hdr, "")
		var info struct {
			Sandbox string
			Servers []struct {
				ID, Status, Hash string
				Error            *struct{ Phase, Message string }
				Tools            []struct {
					Name, RemoteName, UIResource string
					AppOnly                      bool
				}
			}
		}
		if err := json.Unmarshal([]byte(body), &info); err != nil || resp.StatusCode != 200 {
			t.Fatalf("servers = %d %s", resp.StatusCode, body)
		}
		if len(info.Servers) != 2 || info.Servers[0].ID != "fixture" || info.Servers[1].ID != "gone" {
			t.Fatalf("servers %+v: want fixture then gone (config order)", info.Servers)
		}
		if g := info.Servers[1]; g.Status != "failed" || g.Error == nil || g.Error.Phase == "" {
			t.Errorf("failed server: %+v", g)
		}
		var names []string
		for _, tool := range info.Servers[0].Tools {
			n := tool.Name
			if tool.AppOnly {
				n = "app-only:" + tool.RemoteName
			}
			if tool.UIResource != "" {
				n += "=" + tool.UIResource
			}
			names = append(names, n)
		}
		if got, want := strings.Join(names, " "), "counter=ui://fixture/app.html greet secret app-only:bump"; got != want {
			t.Errorf("tools %s, want %s", got, want)
		}
		if info.Sandbox != h.SandboxOrigin()+"/sandbox" || info.Servers[0].Hash == "" {
			t.Errorf("sandbox %q, hash %q", info.Sandbox, info.Servers[0].Hash)
		}
	})

	tests := []struct {
		name   string
		body   string
		status int
		check  func(r map[string]any) bool
	}{
		{"ordinary", `{"server":"fixture","tool":"greet","arguments":{"name":"Ada"}}`, 200,
			func(r map[string]any) bool {
				return strings.HasSuffix(r["modelText"].(string), "hello Ada") && r["result"] != nil && r["error"] == nil
			}},
		{"tool error is data", `{"server":"fixture","tool":"greet","arguments":{"name":"error"}}`, 200,
			func(r map[string]any) bool {
				return r["toolError"] == true && r["modelText"] == "no greeting for error" && r["result"] != nil
			}},
		{"invalid arguments never reach the server", `{"server":"fixture","tool":"greet","arguments":{"name":"a","times":"x"}}`, 200,
			func(r map[string]any) bool {
				return strings.Contains(r["error"].(string), "invalid arguments: at /times") && r["result"] == nil && r["modelText"] == r["error"]
			}},
		{"App tool", `{"server":"fixture","tool":"counter","arguments":{"label":"x"}}`, 200,
			func(r map[string]any) bool {
				app, _ := r["app"].(map[string]any)
				in, _ := app["toolInput"].(map[string]any)
				return app["resourceUri"] == "ui://fixture/app.html" && app["serverId"] == "fixture" && app["serverHash"] != "" && in["label"] == "x" &&
					strings.HasPrefix(r["modelText"].(string), "count is ")
			}},
		{"app-only tool", `{"server":"fixture","tool":"bump"}`, 200,
			func(r map[string]any) bool {
				return r["appOnly"] == true && strings.Contains(r["modelText"].(string), `"count"`)
			}},
		{"unknown tool", `{"server":"fixture","tool":"nope"}`, 404, nil},
		{"unknown server", `{"server":"nope","tool":"greet"}`, 404, nil},
		{"failed server", `{"server":"gone","tool":"x"}`, 404, nil},
		{"by hash is not by ID", `{"server":"` + "ffff" + `","tool":"greet"}`, 404, nil},
		{"not JSON", `{"server":`, 400, nil},
		{"missing tool", `{"server":"fixture"}`, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, "POST", h.Origin()+"/api/call", hdr, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("call %s = %d %s, want %d", tt.body, resp.StatusCode, body, tt.status)
			}
			if tt.check == nil {
				return
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(body), &r); err != nil || !tt.check(r) {
				t.Errorf("call %s = %s", tt.body, body)
			}
		})
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "localhost:0", "nonsense"} {
		if h, err := serve.Listen(serve.Options{Set: &bridge.Set{}, Addr: addr}); err == nil {
			h.Close()
			t.Errorf("Listen(%q) succeeded; only loopback IPs are allowed", addr)
		}
	}
	if _, err := serve.Listen(serve.Options{}); err == nil {
		t.Error("Listen without a Set succeeded")
	}
}
