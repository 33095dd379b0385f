package serve

import (
	"strings"
	"testing"
)

func TestParseCSP(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		want     CSP
		problems int
	}{
		{"absent", ``, CSP{}, 0},
		{"null", `null`, CSP{}, 0},
		{"empty", `{}`, CSP{}, 0},
		{"declared", `{"connectDomains":["https://api.example.com","wss://rt.example.com:8443"],"resourceDomains":["https://*.cdn.example.com","https://cdn.example.com/lib/"],"frameDomains":["https://www.youtube.com"],"baseUriDomains":["https://base.example.com"]}`,
			CSP{ConnectDomains: []string{"https://api.example.com", "wss://rt.example.com:8443"}, ResourceDomains: []string{"https://*.cdn.example.com", "https://cdn.example.com/lib/"},
				FrameDomains: []string{"https://www.youtube.com"}, BaseURIDomains: []string{"https://base.example.com"}}, 0},
		{"keywords and wildcards refused", `{"connectDomains":["*","'unsafe-eval'","https:","data:","https://ok.example.com"]}`,
			CSP{ConnectDomains: []string{"https://ok.example.com"}}, 4},
		{"directive injection refused", `{"resourceDomains":["https://a.example.com; script-src *","https://b.example.com 'unsafe-eval'","https://c.example.com,https://d"]}`, CSP{}, 3},
		{"non-strings refused", `{"frameDomains":[1,null,{"x":1},"https://f.example.com"]}`, CSP{FrameDomains: []string{"https://f.example.com"}}, 3},
		{"not an array", `{"connectDomains":"https://a.example.com"}`, CSP{}, 1},
		{"not an object", `["https://a.example.com"]`, CSP{}, 1},
		{"bad json", `{"connectDomains":[`, CSP{}, 1},
		{"other schemes refused", `{"connectDomains":["javascript://x","file:///etc","ftp://f.example.com"]}`, CSP{}, 3},
		{"too long", `{"connectDomains":["https://` + strings.Repeat("a", 300) + `.example.com"]}`, CSP{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := ParseCSP([]byte(tt.raw))
			if !equalCSP(got, tt.want) || len(problems) != tt.problems {
				t.Errorf("ParseCSP(%s) = %+v, %q; want %+v with %d problems", tt.raw, got, problems, tt.want, tt.problems)
			}
		})
	}
}

func TestParseCSPBounds(t *testing.T) {
	many := `{"connectDomains":[` + strings.Repeat(`"https://a.example.com",`, 40) + `"https://a.example.com"]}`
	got, problems := ParseCSP([]byte(many))
	if len(got.ConnectDomains) != maxCSPSources || len(problems) != 1 {
		t.Errorf("41 entries: kept %d with problems %q; want %d and one problem", len(got.ConnectDomains), problems, maxCSPSources)
	}
	huge := `{"connectDomains":["` + strings.Repeat("x", maxCSPJSON) + `"]}`
	if got, problems := ParseCSP([]byte(huge)); !equalCSP(got, CSP{}) || len(problems) != 1 {
		t.Errorf("oversized declaration: %+v %q", got, problems)
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name      string
		csp       CSP
		ancestors []string
		want      string
	}{
		{"restrictive default", CSP{}, nil,
			"default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'"},
		{"declared origins only where declared",
			CSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}, FrameDomains: []string{"https://v.example.com"}, BaseURIDomains: []string{"https://b.example.com"}},
			[]string{"http://127.0.0.1:1", "http://127.0.0.1:2"},
			"default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; style-src 'self' 'unsafe-inline' https://cdn.example.com; img-src 'self' data: https://cdn.example.com; font-src 'self' https://cdn.example.com; media-src 'self' data: https://cdn.example.com; connect-src https://api.example.com; frame-src https://v.example.com; object-src 'none'; base-uri https://b.example.com; frame-ancestors http://127.0.0.1:1 http://127.0.0.1:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.csp.Policy(tt.ancestors...); got != tt.want {
				t.Errorf("Policy =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// Whatever a server declares, the policy keeps its ten directives, never gains a keyword, and
// keeps object-src 'none' and default-src 'none'.
func FuzzParseCSP(f *testing.F) {
	f.Add([]byte(`{"connectDomains":["https://a.example.com"],"resourceDomains":["https://*.b.example.com:443/x/"]}`))
	f.Add([]byte(`{"frameDomains":["https://x; script-src *"],"baseUriDomains":["'self'"]}`))
	f.Add([]byte(`{"connectDomains":[1,2,3]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, _ := ParseCSP(raw)
		p := c.Policy()
		if n := strings.Count(p, ";"); n != 9 {
			t.Fatalf("policy has %d separators: %s", n, p)
		}
		if !strings.HasPrefix(p, "default-src 'none'; ") || !strings.Contains(p, "; object-src 'none'; ") {
			t.Fatalf("policy lost its defaults: %s", p)
		}
		for _, list := range [][]string{c.ConnectDomains, c.ResourceDomains, c.FrameDomains, c.BaseURIDomains} {
			for _, s := range list {
				if strings.ContainsAny(s, "'\"; ,\t\n\r") || s == "*" || !strings.Contains(s, "://") {
					t.Fatalf("accepted %q", s)
				}
			}
		}
	})
}

func equalCSP(a, b CSP) bool {
	eq := func(x, y []string) bool { return strings.Join(x, "\n") == strings.Join(y, "\n") }
	return eq(a.ConnectDomains, b.ConnectDomains) && eq(a.ResourceDomains, b.ResourceDomains) &&
		eq(a.FrameDomains, b.FrameDomains) && eq(a.BaseURIDomains, b.BaseURIDomains)
}
