package redact

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// maxInstructionsBytes is the bound the bridge keeps instructions to (bridge.maxInstructionsBytes).
const maxInstructionsBytes = 16 << 10

// cleanInstructions is Instructions as the bridge calls it.
func cleanInstructions(s string) string { return Instructions(s, maxInstructionsBytes) }

func TestCleanInstructions(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"  plain\n\ttabbed  ":          "plain\n\ttabbed",
		"a\r\nb\rc":                    "a\nb\nc",
		"bell\x07 esc\x1b del\x7f":     `bell\x07 esc\x1b del\x7f`,
		"bidi\u202e zw\u200b c1\u0085": `bidi\u202e zw\u200b c1\u0085`,
		"bad\xffutf8":                  "bad\uFFFDutf8",
		"line\u2028sep":                `line\u2028sep`,
		"日本語 ok":                       "日本語 ok",
	} {
		if got := cleanInstructions(in); got != want {
			t.Errorf("cleanInstructions(%q) = %q, want %q", in, got, want)
		}
	}
}

// Whatever a server sends, the kept text is valid UTF-8, bounded, and free of control and
// format characters other than newline and tab.
func FuzzCleanInstructions(f *testing.F) {
	for _, s := range []string{"Use search.", "\x1b[2J\r\n\u202e", "\xff\xfe\xfd", strings.Repeat("é", maxInstructionsBytes), "a\u2029b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := cleanInstructions(in)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", in)
		}
		if len(out) > maxInstructionsBytes+len("\n[instructions cut: 99999999999 more bytes]") {
			t.Fatalf("%d bytes kept", len(out))
		}
		for _, r := range out {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') {
				t.Fatalf("raw %U kept from %q", r, in)
			}
		}
		if strings.Count(asciiLower(FenceTag(out, "server-instructions")), "</server-instructions") != 0 {
			t.Fatalf("fence leaves a closing tag in %q", out)
		}
	})
}
