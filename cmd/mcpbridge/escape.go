package main

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// Server-controlled text (tool names, descriptions, schema keys, serverInfo, stderr, error
// messages, tool results) reaches the operator's terminal. A raw control character there can
// clear the screen, rewrite lines with \r, set the window title or write the clipboard (OSC
// 52), so everything the CLI prints for people goes through escapeText: control characters
// become visible \u00XX escapes. JSON output is valid JSON whose strings never hold a raw
// control character (see terminalJSON).

// escapeText returns s with every C0 control character, DEL and C1 control character
// (U+0080-U+009F) written as a visible \u00XX escape, and invalid UTF-8 as U+FFFD. With block
// set (a block of text: a description, a tool result) '\n', '\t' and "\r\n" are kept; a lone
// '\r' is always escaped, as it rewrites the line on a terminal.
func escapeText(s string, block bool) string {
	if !needsEscape(s, block) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case block && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case block && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteRune(r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeLine is escapeText for one line of output (no block).
func escapeLine(s string) string { return escapeText(s, false) }

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// needsEscape reports whether escapeText would change s.
func needsEscape(s string, block bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if !block || (c != '\n' && c != '\t' && (c != '\r' || i+1 >= len(s) || s[i+1] != '\n')) {
					return true
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || isControl(r) {
			return true
		}
		i += size
	}
	return false
}

// terminalJSON escapes the characters JSON lets through raw that a terminal may act on:
// DEL and C1 controls inside strings become \u escapes. The document means the same and
// stays valid JSON (encoding/json already escapes C0 controls).
func terminalJSON(b []byte) []byte {
	s := string(b)
	if !needsEscape(s, true) {
		return b
	}
	var out strings.Builder
	out.Grow(len(b) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	return []byte(out.String())
}

// escapeLogAttr is the tint handler's ReplaceAttr: every string it will print (the message
// and each attribute value, errors and other values included) is escaped. tint writes
// quoted values with "\x1b" turned back into a raw ESC (to keep colours in values), so the
// text \x1b a server sends is spelled \u001b as well.
func escapeLogAttr(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.MessageKey && len(groups) == 0 {
		// tint writes the message unquoted: one line.
		return slog.String(a.Key, strings.ReplaceAll(escapeText(a.Value.String(), false), `\x1b`, `\u001b`))
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, escapeLog(a.Value.String()))
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case slog.Level, *slog.Source:
			return a
		case error:
			return slog.Any(a.Key, escapedError(escapeLog(v.Error())))
		case fmt.Stringer:
			return slog.String(a.Key, escapeLog(v.String()))
		default:
			return slog.String(a.Key, escapeLog(fmt.Sprintf("%+v", v)))
		}
	}
	return a
}

func escapeLog(s string) string {
	return strings.ReplaceAll(escapeText(s, true), `\x1b`, `\u001b`)
}

// escapedError is an error whose text was escaped for the terminal.
type escapedError string

func (e escapedError) Error() string { return string(e) }
