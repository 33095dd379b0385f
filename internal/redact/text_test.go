package redact

import (
	"testing"
	"unicode/utf8"
)

// TestText is the table of the untrusted-text helpers: each row is one caller's shape.
func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, got, want string
	}{
		{"one line", OneLine(" a\n\tb  c\r\n"), "a b c"},
		{"clip short", Clip("abc", 3), "abc"},
		{"clip cut", Clip("abcd", 3), "abc…"},
		{"clip rune boundary", Clip("aé", 2), "a…"},
		{"clip zero", Clip("abc", 0), "…"},
		{"clip negative", Clip("abc", -1), "…"},
		{"clip mark none", ClipMark("abcd", 2, ""), "ab"},
		{"clip mark ascii", ClipMark("abcd", 2, "..."), "ab..."},
		{"line", Line("a\nb c d", 3), "a b…"},
		{"clean", Clean("a\xffb", 10), "a\uFFFDb"},
		{"clean cut", Clean("a\xffb", 2), "a…"},
		{"quote", Quote("a\"\n\x1b", 10), `"a\"\n\x1b"`},
		{"quote cut", Quote("abcdef", 3), `"abc…"`},
		{"quote invalid", Quote("\xff", 10), `"�"`},
		{"ascii", ASCII("a\x1bé\x7f~", '?'), "a??" + "?~"},
		{"controls", Controls("a\x1bé\x7f\n", ' '), "a é  "},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestClipValid checks that a cut never splits a rune, at every length.
func TestClipValid(t *testing.T) {
	t.Parallel()
	s := "aé€😀b"
	for n := range len(s) + 1 {
		if got := ClipMark(s, n, ""); !utf8.ValidString(got) || len(got) > n {
			t.Errorf("ClipMark(%q, %d) = %q", s, n, got)
		}
	}
}
