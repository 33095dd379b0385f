package apps

import (
	"crypto/md5"
	"encoding/hex"
	"unicode/utf8"
)

// ServerHash returns the hash by which frontends refer to an HTTP or SSE server without
// seeing its URL or credentials. It is compatible with getServerHash of
// @ag-ui/mcp-apps-middleware 0.1.1: the lowercase hex MD5 of the UTF-8 bytes of exactly
// what JavaScript's JSON.stringify({type, url}) produces — keys type then url, no
// whitespace, strings escaped the JavaScript way (only '"', '\' and control characters
// below U+0020; '/', '<', '>', '&', non-ASCII and U+2028/U+2029 stay raw). Go's
// json.Marshal escapes differently and must not be used for this.
//
// typ is "http" (Streamable HTTP) or "sse"; url is hashed exactly as configured, with no
// normalisation (a trailing slash changes the hash). Headers and server IDs are not part of
// the hash. For example ServerHash("http", "http://localhost:3001/mcp") is
// "2637fef21d2e2f89aa11b1d288fbe14d".
//
// Invalid UTF-8 in typ or url (which no JavaScript string can hold) is hashed as if each
// invalid byte were U+FFFD. An empty url is hashed as "url":"", whereas upstream would drop
// an undefined url; configurations without a URL have no upstream hash anyway.
func ServerHash(typ, url string) string {
	return md5Hex(serverPayload(typ, url))
}

// StdioHash returns the server hash of a stdio server, which upstream does not define
// (upstream would hash every stdio server as {"type":"stdio"}, so they would all collide).
// It is mcpbridge's own extension: the lowercase hex MD5 of
// {"type":"stdio","command":…,"args":[…]} serialised the way [ServerHash] serialises,
// args always an array ([] when there are none). Environment, working directory and
// server ID are not part of the hash, so secrets passed in the environment never reach it;
// arguments are, so a frontend should treat the hash as opaque.
func StdioHash(command string, args []string) string {
	return md5Hex(stdioPayload(command, args))
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// serverPayload returns the bytes JSON.stringify({type: typ, url: url}) produces.
func serverPayload(typ, url string) []byte {
	b := make([]byte, 0, len(`{"type":"","url":""}`)+len(typ)+len(url)+8)
	b = append(b, `{"type":`...)
	b = appendJSString(b, typ)
	b = append(b, `,"url":`...)
	b = appendJSString(b, url)
	return append(b, '}')
}

// stdioPayload returns the bytes JSON.stringify({type: "stdio", command, args}) produces.
func stdioPayload(command string, args []string) []byte {
	b := append([]byte(nil), `{"type":"stdio","command":`...)
	b = appendJSString(b, command)
	b = append(b, `,"args":[`...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, a)
	}
	return append(b, "]}"...)
}

const hexDigits = "0123456789abcdef"

// appendJSString appends s as JavaScript's JSON.stringify writes a string: in double quotes,
// with '"' and '\' backslash-escaped, \b \f \n \r \t for those controls, \u00xx (lowercase
// hex) for the other characters below U+0020, and everything else raw. Invalid UTF-8 bytes
// become U+FFFD, so the output is always valid UTF-8 JSON.
//
// It is deliberately not internal/jsonstr, the module's JSON string encoder: the hash must
// equal what a browser computes over JSON.stringify, which leaves U+2028 and U+2029 raw and
// writes U+FFFD itself where encoding/json escapes them (\u2028, \ufffd).
func appendJSString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
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
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}
