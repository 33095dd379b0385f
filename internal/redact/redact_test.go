package redact

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
)

// TestRedact is the one table of what is masked and how it is shown. Every row's secret
// (when set) must not appear in the output.
func TestRedact(t *testing.T) {
	t.Parallel()
	url := func(s string) string { return URL(s) }
	args := func(s string) string { return strings.Join(Args(strings.Fields(s)), " ") }
	argv := func(a ...string) func(string) string {
		return func(string) string { return fmt.Sprintf("%q", Args(a)) }
	}
	tests := []struct {
		name   string
		f      func(string) string
		in     string
		want   string
		secret string
	}{
		{"url plain", url, "https://h/mcp", "https://h/mcp", ""},
		{"url userinfo, values, fragment", url, "https://user:pw-secret@h/mcp?token=abc-secret&x=1#frag", "https://***@h/mcp?token=***&x=***", "pw-secret"},
		{"url port", url, "http://h:8080/sse?key=s3cr3t", "http://h:8080/sse?key=***", "s3cr3t"},
		{"url bare key", url, "https://h/mcp?sk-live-abc", "https://h/mcp?***", "sk-live-abc"},
		{"url bare key among values", url, "https://h/mcp?a=1&sk-live-abc&b=2", "https://h/mcp?a=***&***&b=***", "sk-live-abc"},
		{"url escaped bare key", url, "https://h/mcp?sk%2Dlive%2Dabc", "https://h/mcp?***", "sk-live-abc"},
		{"url empty query", url, "https://h/mcp?", "https://h/mcp", ""},
		{"url ipv6", url, "http://[::1]/x", "http://[::1]/x", ""},
		{"url unparsable", url, "::not a url", "***", "not a url"},
		{"url relative ref", url, "other.json#/x", "other.json", ""},
		{"query", Query, "a=1&&b&c=", "a=***&&***&c=***", ""},
		{"keys", func(string) string { return Keys(map[string]string{"B": "v-secret", "A": "w-secret"}) }, "", "{A=***,B=***}", "v-secret"},
		{"keys empty", func(string) string { return Keys(nil) }, "", "{}", ""},

		{"args plain", args, "-y @modelcontextprotocol/server-filesystem /tmp", "-y @modelcontextprotocol/server-filesystem /tmp", ""},
		{"args --token=", args, "--token=tok-secret --verbose", "--token=*** --verbose", "tok-secret"},
		{"args --api-key next", args, "serve --api-key key-secret --port 3000", "serve --api-key *** --port 3000", "key-secret"},
		{"args --api_key next", args, "--API_KEY key-secret", "--API_KEY ***", "key-secret"},
		{"args -password next", args, "-password pw-secret", "-password ***", "pw-secret"},
		{"args --client-secret", args, "--client-secret=cs-secret", "--client-secret=***", "cs-secret"},
		{"args --github-pat", args, "--github-pat pat-secret", "--github-pat ***", "pat-secret"},
		{"args --auth", args, "--auth auth-secret", "--auth ***", "auth-secret"},
		{"args credential flag then flag", args, "--use-token-cache --port 1", "--use-token-cache --port 1", ""},
		{"args no- flag", args, "--no-auth server.js", "--no-auth server.js", ""},
		{"args path flag not pat", args, "--path /srv", "--path /srv", ""},
		{"args short flags kept", args, "-p 3000 -k", "-p 3000 -k", ""},
		{"args env style", args, "run -e GITHUB_TOKEN=gh-secret -e GITHUB_TOKEN image", "run -e GITHUB_TOKEN=*** -e GITHUB_TOKEN image", "gh-secret"},
		{"args env style not secret", args, "-e DEBUG=1", "-e DEBUG=1", ""},
		{"args url", args, "mcp-remote https://h/mcp?sk-live-abc", "mcp-remote https://h/mcp?***", "sk-live-abc"},
		{"args url after flag", args, "--url=https://u:p-secret@h/mcp", "--url=https://***@h/mcp", "p-secret"},
		{"args url plain", args, "--url=https://h/mcp", "--url=https://h/mcp", ""},
		{"args header", argv("mcp-remote", "https://h/mcp", "--header", "Authorization: Bearer hdr-secret"), "", `["mcp-remote" "https://h/mcp" "--header" "Authorization: ***"]`, "hdr-secret"},
		{"args header any name", argv("-H", "X-Custom:cust-secret"), "", `["-H" "X-Custom: ***"]`, "cust-secret"},
		{"args header inline", argv("--header=X-Api-Key: k-secret"), "", `["--header=X-Api-Key: ***"]`, "k-secret"},
		{"args credential header alone", argv("Authorization: Bearer b-secret"), "", `["Authorization: ***"]`, "b-secret"},
		{"args bearer alone", argv("Bearer b-secret"), "", `["Bearer ***"]`, "b-secret"},
		{"args other header-like kept", argv("Note: hello"), "", `["Note: hello"]`, ""},
		{"args nil", func(string) string { return fmt.Sprint(Args(nil) == nil) }, "", "true", ""},

		{"string", func(s string) string { return String(s, []string{"abc", "abcdef", "x"}) }, "abcdef abc x", "*** *** x", "abc"},
		{"string no secrets", func(s string) string { return String(s, nil) }, "abc", "abc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f(tt.in)
			if got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
			if tt.secret != "" && strings.Contains(got, tt.secret) {
				t.Errorf("%s leaks %q", got, tt.secret)
			}
		})
	}
}

func TestArgSecrets(t *testing.T) {
	t.Parallel()
	args := []string{"--token=t-secret", "--api-key", "k-secret", "https://u:p-secret@h/?q-secret", "-H", "A: h-secret", "plain"}
	got := strings.Join(ArgSecrets(args), " ")
	for _, s := range []string{"t-secret", "k-secret", "p-secret", "q-secret", "h-secret"} {
		if !strings.Contains(got, s) {
			t.Errorf("ArgSecrets = %q, missing %q", got, s)
		}
	}
	if strings.Contains(got, "plain") {
		t.Errorf("ArgSecrets = %q holds a plain argument", got)
	}
}

func TestURLSecrets(t *testing.T) {
	t.Parallel()
	u, err := url.Parse("https://name:pw@h/mcp?a=v%20x&bare&e=")
	if err != nil {
		t.Fatal(err)
	}
	got := URLSecrets(u)
	want := []string{"a=v%20x&bare&e=", "v%20x", "v x", "bare", "name", "pw"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("URLSecrets = %q, want %q", got, want)
	}
}

// timeoutError is a net.Error that says it timed out.
type timeoutError struct{ msg string }

func (e timeoutError) Error() string   { return e.msg }
func (e timeoutError) Timeout() bool   { return true }
func (e timeoutError) Temporary() bool { return false }

func TestError(t *testing.T) {
	t.Parallel()
	secrets := []string{"s3cret"}
	plain := errors.New("no secret here")
	if got := Error(plain, secrets); got != plain {
		t.Errorf("an error without secrets was replaced: %v", got)
	}
	if Error(nil, secrets) != nil {
		t.Error("Error(nil) != nil")
	}
	tests := []struct {
		name    string
		err     error
		is      error
		timeout bool
	}{
		{"canceled", fmt.Errorf("get https://h/?k=s3cret: %w", context.Canceled), context.Canceled, false},
		{"deadline", fmt.Errorf("get https://h/?k=s3cret: %w", context.DeadlineExceeded), context.DeadlineExceeded, false},
		{"net timeout", fmt.Errorf("dial: %w", timeoutError{"i/o timeout s3cret"}), nil, true},
	}
	for _, tt := range tests {
		got := Error(tt.err, secrets)
		if strings.Contains(got.Error(), "s3cret") || !strings.Contains(got.Error(), Mask) {
			t.Errorf("%s: %q", tt.name, got)
		}
		if tt.is != nil && !errors.Is(got, tt.is) {
			t.Errorf("%s: errors.Is(%v) false", tt.name, tt.is)
		}
		var ne net.Error
		if tt.timeout && (!errors.As(got, &ne) || !ne.Timeout()) {
			t.Errorf("%s: not a timeout", tt.name)
		}
	}
}

// FuzzURL checks that what URL returns shows no userinfo, query value, bare key or
// fragment.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://h/mcp?sk-live-abc", "https://u:p@h/?a=b&c", "http://[::1]:1/?%zz", "x?y#z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := URL(raw)
		if _, err := url.Parse(raw); err != nil {
			if got != Mask {
				t.Fatalf("URL(%q) = %q for an unparsable URL", raw, got)
			}
			return
		}
		if got == Mask {
			return
		}
		// What URL shows: no userinfo but the mask, no fragment, query parts masked.
		g, err := url.Parse(got)
		if err != nil {
			t.Fatalf("URL(%q) = %q does not parse: %v", raw, got, err)
		}
		if _, hasPW := g.User.Password(); g.User != nil && (g.User.Username() != Mask || hasPW) {
			t.Fatalf("URL(%q) = %q shows userinfo", raw, got)
		}
		if g.Fragment != "" {
			t.Fatalf("URL(%q) = %q: fragment kept", raw, got)
		}
		for p := range strings.SplitSeq(g.RawQuery, "&") {
			if p != "" && p != Mask && !strings.HasSuffix(p, "="+Mask) {
				t.Fatalf("URL(%q) = %q shows query part %q", raw, got, p)
			}
		}
	})
}

// FuzzArgs checks that Args keeps the shape of a command line and that an argument it
// masks shows each of its secrets fewer times than before.
func FuzzArgs(f *testing.F) {
	f.Add("--token=a-secret", "--api-key", "b-secret")
	f.Add("-H", "Authorization: Bearer x-secret", "https://h/?y-secret")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		args := []string{a, b, c}
		shown := Args(args)
		if len(shown) != len(args) {
			t.Fatalf("Args changed the length: %q", shown)
		}
		for _, m := range argSecrets(args) {
			rest := strings.ReplaceAll(m.shown, Mask, "\x00")
			for _, s := range m.secrets {
				if len(s) >= 4 && strings.Count(rest, s) > strings.Count(args[m.index], s)-1 {
					t.Fatalf("Args(%q)[%d] = %q shows %q", args, m.index, m.shown, s)
				}
			}
		}
	})
}
