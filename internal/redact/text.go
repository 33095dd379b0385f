package redact

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The helpers below bound and quote untrusted text (a server's error, a description, an
// authorization server's answer) before it goes into an error, a log line or a status. They
// are the only copies in the module: a caller picks the cut, the mark and the character
// rule it needs instead of writing its own.

// Ellipsis is what [Clip] appends where it cut a text.
const Ellipsis = "…"

// OneLine returns s with every run of white space (line breaks included) made one space and
// leading and trailing space removed.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip returns s cut to at most n bytes on a rune boundary, followed by [Ellipsis] when it
// was cut. A string of at most n bytes is returned unchanged.
func Clip(s string, n int) string { return ClipMark(s, n, Ellipsis) }

// ClipMark is [Clip] with mark in place of [Ellipsis]: "" for a bare cut, "..." for text
// that must stay ASCII.
func ClipMark(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// Line returns s on one line ([OneLine]) cut to n bytes ([Clip]): a server's multi-line
// message as one line of an error or a log.
func Line(s string, n int) string { return Clip(OneLine(s), n) }

// Clean returns s with invalid UTF-8 replaced by U+FFFD, cut to n bytes ([Clip]).
func Clean(s string, n int) string { return Clip(strings.ToValidUTF8(s, "\uFFFD"), n) }

// Quote returns s made valid and cut to n bytes ([Clean]) and quoted as Go quotes it
// (strconv.Quote, %q): control characters escaped, so the text cannot forge a line or a
// field of the message it goes into.
func Quote(s string, n int) string { return strconv.Quote(Clean(s, n)) }

// ASCII returns s with every rune outside printable ASCII (U+0020 to U+007E) replaced by
// repl, invalid UTF-8 included: for text shown where only ASCII is safe (a terminal line, a
// header-derived message).
func ASCII(s string, repl rune) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return repl
		}
		return r
	}, s)
}

// Controls returns s with each C0 control character and DEL replaced by repl; other text,
// non-ASCII included, is kept.
func Controls(s string, repl rune) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return repl
		}
		return r
	}, s)
}
