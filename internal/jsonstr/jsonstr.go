// Package jsonstr is the module's one JSON string encoder: [Append] writes a Go string as
// encoding/json writes it with HTML escaping off, without reflection or allocation
// ([Marshal] is encoding/json with HTML escaping off, for whole values).
//
// The tools/call result encoder (results), the direct client's request writer (transport,
// internal/wire) and the provider formats (bridge/provider) use it, so a string crosses
// the bridge spelt one way. The package imports only the standard library and may be
// imported by any package of the module, internal/wire included (a leaf by design).
//
// apps keeps its own encoder on purpose: the MCP Apps server hash must match what a
// browser's JSON.stringify writes, which leaves U+2028 and U+2029 raw; this package escapes
// them as encoding/json does.
package jsonstr

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string, byte for byte as encoding/json encodes it with
// SetEscapeHTML(false): '"' and '\' backslash-escaped, \b \f \n \r \t for those controls,
// \u00xx (lowercase hex) for the other characters below U+0020, invalid UTF-8 bytes as
// \ufffd, U+2028 and U+2029 escaped, and everything else raw.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Marshal encodes v as encoding/json does with SetEscapeHTML(false), without the trailing
// newline; nil when v cannot be encoded.
func Marshal(v any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
