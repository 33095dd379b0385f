package serve_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/serve"
)

// The page gets each tool's and server's token cost and the server's instructions, and
// searches the tools with the Set's index.
func TestSearchAndTokens(t *testing.T) {
	h := startHost(t, []bridge.ServerConfig{{ID: "fixture", URL: fixtureServer(t, nil)}})
	base := h.Origin()
	hdr := map[string]string{"Cookie": cookieFor(h)}

	resp, body := send(t, "GET", base+"/api/servers", hdr, "")
	if resp.StatusCode != 200 {
		t.Fatalf("servers: %d %s", resp.StatusCode, body)
	}
	var page struct {
		Servers []struct {
			ID                 string `json:"id"`
			Instructions       string `json:"instructions"`
			InstructionsTokens int    `json:"instructionsTokens"`
			Tokens             int    `json:"tokens"`
			Tools              []struct {
				Name    string `json:"name"`
				Tokens  int    `json:"tokens"`
				AppOnly bool   `json:"appOnly"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	s := page.Servers[0]
	if !strings.HasPrefix(s.Instructions, "Greet people") || s.InstructionsTokens == 0 {
		t.Errorf("instructions %q (%d tokens)", s.Instructions, s.InstructionsTokens)
	}
	sum := 0
	for _, tl := range s.Tools {
		if !tl.AppOnly && tl.Tokens <= 0 {
			t.Errorf("tool %s has no token count", tl.Name)
		}
		sum += tl.Tokens
	}
	if s.Tokens != sum || sum == 0 {
		t.Errorf("server tokens %d, tools sum to %d", s.Tokens, sum)
	}

	resp, body = send(t, "GET", base+"/api/search?q=say+hello+to+someone&k=2", hdr, "")
	var res struct {
		Query   string `json:"query"`
		Results []struct {
			Server, Name, RemoteName string
			Score                    float64
		} `json:"results"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("search: %d %s", resp.StatusCode, body)
	}
	if len(res.Results) == 0 || len(res.Results) > 2 || res.Results[0].Name != "greet" || res.Results[0].Server != "fixture" {
		t.Errorf("search results %+v, want greet first, at most 2", res.Results)
	}
	for _, r := range res.Results {
		if r.Name == "" || r.RemoteName == "bump" {
			t.Errorf("search returned an app-only tool: %+v", r)
		}
	}
	resp, body = send(t, "GET", base+"/api/search?q=", hdr, "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"results":[]`) {
		t.Errorf("empty query: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{"/api/search?q=" + strings.Repeat("a", 1001), "/api/search?q=x&k=0", "/api/search?q=x&k=many"} {
		if resp, body := send(t, "GET", base+bad, hdr, ""); resp.StatusCode != 400 {
			t.Errorf("%s: %d %s, want 400", bad[:min(len(bad), 40)], resp.StatusCode, body)
		}
	}
	if resp, _ := send(t, "GET", base+"/api/search?q=greet", nil, ""); resp.StatusCode != 401 {
		t.Errorf("search without the token: %d", resp.StatusCode)
	}
}

// cookieFor is the page's token cookie for h.
func cookieFor(h *serve.Host) string {
	host := strings.TrimPrefix(h.Origin(), "http://")
	return "mcpbridge_token_" + host[strings.LastIndex(host, ":")+1:] + "=" + token(h)
}
