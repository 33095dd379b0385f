package transport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNPMError: npm's real error line, not its "complete log" pointer, from stderr captured
// from npm 10/11 (testdata/npm: npx -y @modelcontextprotocol/server-doesnotexist-xyz, and
// npx -y @modelcontextprotocol/server-everything@99.99.99).
func TestNPMError(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "npm", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, tail, want string
	}{
		{"E404", read("e404.txt"), "npm error code E404: 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-doesnotexist-xyz"},
		{"ETARGET", read("etarget.txt"), "npm error code ETARGET: notarget No matching version found for @modelcontextprotocol/server-everything@99.99.99."},
		{"npm 8", "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/x\nnpm ERR! A complete log of this run can be found in:\n", "npm error code E404: 404 Not Found - GET https://registry.npmjs.org/x"},
		{"code only", "npm error code ENOTFOUND\nnpm error A complete log of this run can be found in: /x.log\n", "npm error code ENOTFOUND"},
		{"CRLF", "npm error code E404\r\nnpm error 404\r\nnpm error 404 Not Found - GET u\r\n", "npm error code E404: 404 Not Found - GET u"},
		{"no npm", "Error: listen EADDRINUSE\n    at Server.listen\n", ""},
		{"npm warning only", "npm warn exec The following package was not found and will be installed: x@1\n", ""},
		{"empty", "", ""},
		{"long", "npm error code E404\nnpm error " + strings.Repeat("x", 1000) + "\n", "npm error code E404: " + strings.Repeat("x", 279)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := npmError(tt.tail, maxLastStderr)
			if got != tt.want && !(tt.name == "long" && strings.HasPrefix(got, "npm error code E404: xxx") && len(got) <= maxLastStderr+8) {
				t.Errorf("npmError = %q, want %q", got, tt.want)
			}
		})
	}
	e := &processEnd{Exited: true, State: "exit status 1", LastStderr: lastLine(read("e404.txt"), maxLastStderr), NPMError: npmError(read("e404.txt"), maxLastStderr), Err: os.ErrClosed}
	if msg := e.Error(); !strings.Contains(msg, `npm: "npm error code E404: 404 Not Found`) || strings.Contains(msg, "complete log") {
		t.Errorf("processEnd says %q", msg)
	}
}
