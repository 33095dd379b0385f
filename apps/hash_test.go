package apps

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"
)

// Vectors: the first eight are from the reference (upstream getServerHash run with node);
// the rest were generated once by hand with node 20,
// crypto.createHash("md5").update(JSON.stringify({type, url})).digest("hex"),
// and hard-coded here.
var serverHashTests = []struct {
	name, typ, url string
	payload        string
	want           string
}{
	{"http localhost", "http", "http://localhost:3001/mcp", `{"type":"http","url":"http://localhost:3001/mcp"}`, "2637fef21d2e2f89aa11b1d288fbe14d"},
	{"sse localhost", "sse", "http://localhost:3001/sse", `{"type":"sse","url":"http://localhost:3001/sse"}`, "46aeb65599c71f7cdfc103453dd7ed7e"},
	{"https example", "http", "https://example.com/mcp", `{"type":"http","url":"https://example.com/mcp"}`, "abc23b2843d00ca07bfad2ec7c0c3dd1"},
	{"ampersand and non-ASCII raw", "http", "https://mcp.example.com/mcp?x=1&y=é", `{"type":"http","url":"https://mcp.example.com/mcp?x=1&y=é"}`, "c4f16c17c93cb60292d2693fe40b4ee8"},
	{"trailing slash kept", "http", "http://localhost:3001/mcp/", `{"type":"http","url":"http://localhost:3001/mcp/"}`, "b40ff93de741c77f3c3a8200ddd311c0"},
	{"html chars and U+2028 raw", "http", "https://a.example/mcp?q=<b>&z=\u2028", "{\"type\":\"http\",\"url\":\"https://a.example/mcp?q=<b>&z=\u2028\"}", "5e3f4dd8fac4949d2825de619bdfae9f"},
	{"quotes and backslash", "http", `http://h/"quoted"\back`, `{"type":"http","url":"http://h/\"quoted\"\\back"}`, "b9531b5b47dc9f5e9667a6be972b67a9"},
	{"short escapes", "http", "http://h/\b\f\n\r\t", `{"type":"http","url":"http://h/\b\f\n\r\t"}`, "627ca3b226d84807e62cca76e9b66bba"},
	{"unicode escapes lowercase, DEL raw", "http", "http://h/\x00\x01\x1f\x7f", "{\"type\":\"http\",\"url\":\"http://h/\\u0000\\u0001\\u001f\x7f\"}", "0b69fa2c3f52ac9f7e0a0a9521256fca"},
	{"vertical tab and escape", "http", "http://h/\x0b\x1b", `{"type":"http","url":"http://h/\u000b\u001b"}`, "1608438f0fc072d978340282e4a851d2"},
	{"U+2029 and astral raw", "sse", "http://h/\u2029/é/😀", "{\"type\":\"sse\",\"url\":\"http://h/\u2029/é/😀\"}", "0c5d11585f8ec278d88d04818e78a6a2"},
	{"fragment and query", "http", "http://h/a/b?c=d#e", `{"type":"http","url":"http://h/a/b?c=d#e"}`, "cd7be889b89aed5d4d5ef362a6deeae0"},
	{"empty", "", "", `{"type":"","url":""}`, "116ba33c36ed67ac3299ac9373a77347"},
}

func TestServerHash(t *testing.T) {
	for _, tt := range serverHashTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(serverPayload(tt.typ, tt.url)); got != tt.payload {
				t.Errorf("serverPayload(%q, %q) = %s, want %s", tt.typ, tt.url, got, tt.payload)
			}
			if got := ServerHash(tt.typ, tt.url); got != tt.want {
				t.Errorf("ServerHash(%q, %q) = %s, want %s", tt.typ, tt.url, got, tt.want)
			}
		})
	}
}

// TestServerHashNotJSONMarshal pins the json.Marshal trap the reference names.
func TestServerHashNotJSONMarshal(t *testing.T) {
	if got, bad := ServerHash("http", "https://mcp.example.com/mcp?x=1&y=é"), "be4de5afbd64bab5e24dc800f230a3ec"; got == bad {
		t.Errorf("ServerHash matches json.Marshal's escaping of &: %s", got)
	}
}

func TestServerHashInvalidUTF8(t *testing.T) {
	// Each invalid byte is hashed as U+FFFD, as a JavaScript string decoded from it would hold.
	if got, want := ServerHash("http", "http://h/\xff"), ServerHash("http", "http://h/\ufffd"); got != want {
		t.Errorf("ServerHash with invalid byte = %s, want %s (U+FFFD)", got, want)
	}
}

var stdioHashTests = []struct {
	name    string
	command string
	args    []string
	payload string
	want    string
}{
	{"npx", "npx", []string{"-y", "@modelcontextprotocol/server-everything"}, `{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}`, "1d8aa2bf5ca625e0a81d81614554fa72"},
	{"nil args", "./srv", nil, `{"type":"stdio","command":"./srv","args":[]}`, "d2bfa06837705e7ad6f3f8ed41aadda7"},
	{"empty args", "./srv", []string{}, `{"type":"stdio","command":"./srv","args":[]}`, "d2bfa06837705e7ad6f3f8ed41aadda7"},
	{"escaping", `my "tool"`, []string{"a\tb", "<&>"}, `{"type":"stdio","command":"my \"tool\"","args":["a\tb","<&>"]}`, "4c4a2046a7bd8fcb9c4ce80c5a2d2ea0"},
}

func TestStdioHash(t *testing.T) {
	for _, tt := range stdioHashTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stdioPayload(tt.command, tt.args)); got != tt.payload {
				t.Errorf("stdioPayload(%q, %q) = %s, want %s", tt.command, tt.args, got, tt.payload)
			}
			if got := StdioHash(tt.command, tt.args); got != tt.want {
				t.Errorf("StdioHash(%q, %q) = %s, want %s", tt.command, tt.args, got, tt.want)
			}
		})
	}
	// Upstream would hash every stdio server as {"type":"stdio"}; ours must not collide.
	if a, b := StdioHash("a", nil), StdioHash("b", nil); a == b {
		t.Errorf("StdioHash(a) = StdioHash(b) = %s", a)
	}
	// Argument boundaries matter.
	if a, b := StdioHash("x", []string{"a b"}), StdioHash("x", []string{"a", "b"}); a == b {
		t.Errorf("StdioHash does not separate arguments: %s", a)
	}
}

var lowerHex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func FuzzServerHash(f *testing.F) {
	for _, tt := range serverHashTests {
		f.Add(tt.typ, tt.url)
	}
	f.Add("http", "\xed\xa0\x80\xff\"\\")
	f.Fuzz(func(t *testing.T, typ, url string) {
		h := ServerHash(typ, url)
		if !lowerHex32.MatchString(h) {
			t.Fatalf("ServerHash(%q, %q) = %q, want 32 lowercase hex digits", typ, url, h)
		}
		payload := serverPayload(typ, url)
		if !utf8.Valid(payload) {
			t.Fatalf("serverPayload(%q, %q) = %q is not valid UTF-8", typ, url, payload)
		}
		var got struct{ Type, URL string }
		if err := json.Unmarshal(payload, &got); err != nil {
			t.Fatalf("serverPayload(%q, %q) = %s does not unmarshal: %v", typ, url, payload, err)
		}
		if !utf8.ValidString(typ) || !utf8.ValidString(url) {
			return
		}
		if got.Type != typ || got.URL != url {
			t.Fatalf("serverPayload(%q, %q) round-trips to (%q, %q)", typ, url, got.Type, got.URL)
		}
		sp := stdioPayload(typ, []string{url, typ})
		var gotStdio struct {
			Type, Command string
			Args          []string
		}
		if err := json.Unmarshal(sp, &gotStdio); err != nil {
			t.Fatalf("stdioPayload = %s does not unmarshal: %v", sp, err)
		}
		if gotStdio.Type != "stdio" || gotStdio.Command != typ || len(gotStdio.Args) != 2 || gotStdio.Args[0] != url || gotStdio.Args[1] != typ {
			t.Fatalf("stdioPayload(%q, [%q %q]) round-trips to %+v", typ, url, typ, gotStdio)
		}
	})
}

func BenchmarkServerHash(b *testing.B) {
	for b.Loop() {
		ServerHash("http", "https://mcp.example.com/mcp?x=1&y=é")
	}
}
