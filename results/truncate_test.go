package results_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/results"
)

func TestTruncate(t *testing.T) {
	digits := strings.Repeat("0123456789", 10) // 100 bytes
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"no cap", digits, 0, digits},
		{"negative cap", digits, -5, digits},
		{"fits", digits, 100, digits},
		{"empty", "", 10, ""},
		{"head and tail", digits, 64, want64(digits)},
		{"below minimum keeps head", digits, 10, "0123456789"},
		{"below minimum rune boundary", "aé€😀", 5, "aé"},
		{"below minimum first rune too wide", "😀", 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := results.Truncate(tt.s, tt.max); got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
		})
	}
}

// want64 spells out the expected Truncate(s, 64) for a 100-byte ASCII s: the marker for 100
// bytes takes 29 bytes, leaving 35: 18 for the head and 17 for the tail.
func want64(s string) string {
	return s[:18] + "\n…[truncated 65 bytes]…\n" + s[len(s)-17:]
}

var markerRE = regexp.MustCompile("\n…\\[truncated ([0-9]+) bytes\\]…\n")

// TestTruncateUTF8 cuts strings of 1-, 2-, 3- and 4-byte runes, shifted by 0 to 3 ASCII bytes,
// at every cap, and checks the cap, UTF-8 validity, the marker and that nothing but the
// marked bytes is lost.
func TestTruncateUTF8(t *testing.T) {
	for _, r := range []string{"a", "é", "€", "😀"} {
		for shift := range 4 {
			s := strings.Repeat("x", shift) + strings.Repeat(r, 100/len(r)+7) + "end"
			for max := 1; max <= len(s)+1; max++ {
				checkTruncate(t, s, max)
			}
		}
	}
}

func checkTruncate(t *testing.T, s string, max int) {
	t.Helper()
	got := results.Truncate(s, max)
	if max > 0 && len(got) > max {
		t.Fatalf("len(Truncate(%q, %d)) = %d, over the cap", s, max, len(got))
	}
	if utf8.ValidString(s) && !utf8.ValidString(got) {
		t.Fatalf("Truncate(%q, %d) = %q, invalid UTF-8", s, max, got)
	}
	if max <= 0 || len(s) <= max {
		if got != s {
			t.Fatalf("Truncate(%q, %d) = %q, want it unchanged", s, max, got)
		}
		return
	}
	if max < results.MinTruncateBytes {
		if !strings.HasPrefix(s, got) || len(got) < max-3 {
			t.Fatalf("Truncate(%q, %d) = %q, want the longest whole-rune prefix", s, max, got)
		}
		return
	}
	m := markerRE.FindStringSubmatchIndex(got)
	if m == nil {
		t.Fatalf("Truncate(%q, %d) = %q, no marker", s, max, got)
	}
	head, tail := got[:m[0]], got[m[1]:]
	cut, _ := strconv.Atoi(got[m[2]:m[3]])
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) || len(head)+cut+len(tail) != len(s) {
		t.Fatalf("Truncate(%q, %d) = %q: head %d + cut %d + tail %d bytes != %d", s, max, got, len(head), cut, len(tail), len(s))
	}
	// Nothing more is cut than the cap and whole runes require: at most 3 bytes at each end,
	// plus what a shorter marker leaves free.
	if slack := max - len(got); slack > 6+len(strconv.Itoa(len(s)))-len(strconv.Itoa(cut)) {
		t.Fatalf("Truncate(%q, %d) = %q: %d bytes under the cap, too much cut", s, max, got, slack)
	}
}
