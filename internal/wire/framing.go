package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// JSON-RPC framing for stdio without go-sdk's per-message costs: go-sdk's
// jsonrpc.DecodeMessage decodes through a streaming decoder that allocates a
// 32 KB buffer per call, and its ioConn tries every line as a batch first
// (another 32 KB). DecodeLine slices the top-level members of one line instead
// and copies only params/result/error (one allocation), leaving their content
// to go-sdk, which decodes (and so validates) them when it uses them.

// MaxMessageDepth is the nesting of one JSON-RPC message go-sdk decodes (its decoder
// refuses deeper messages). A stdio response nested deeper fails its request at once.
const MaxMessageDepth = 1000

// maxDepth bounds the nesting DecodeLine accepts, as go-sdk's decoder does.
const maxDepth = MaxMessageDepth

// ErrNotJSONRPC marks a line that is not a JSON-RPC 2.0 message (or batch).
var ErrNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

// ErrTooDeep marks a line nested deeper than maxDepth.
var ErrTooDeep = fmt.Errorf("%w: nested deeper than %d", ErrNotJSONRPC, maxDepth)

// DecodeLine decodes one line (no newline, surrounding whitespace allowed) as
// a JSON-RPC message or a non-empty batch of them, appending to msgs. The
// messages do not alias line. Any error means the line is not protocol.
func DecodeLine(line []byte, msgs []jsonrpc.Message) ([]jsonrpc.Message, error) {
	n0 := len(msgs)
	i := SkipSpace(line, 0)
	if i == len(line) {
		return msgs, ErrNotJSONRPC
	}
	if line[i] != '[' {
		m, end, err := decodeObject(line, i, 0)
		if err != nil {
			return msgs, err
		}
		if SkipSpace(line, end) != len(line) {
			return msgs, fmt.Errorf("%w: trailing data", ErrNotJSONRPC)
		}
		return append(msgs, m), nil
	}
	i = SkipSpace(line, i+1)
	if i < len(line) && line[i] == ']' {
		return msgs, fmt.Errorf("%w: empty batch", ErrNotJSONRPC)
	}
	for {
		m, end, err := decodeObject(line, i, 1)
		if err != nil {
			return msgs[:n0], err
		}
		msgs = append(msgs, m)
		i = SkipSpace(line, end)
		if i < len(line) && line[i] == ',' {
			i = SkipSpace(line, i+1)
			continue
		}
		if i < len(line) && line[i] == ']' {
			break
		}
		return msgs[:n0], fmt.Errorf("%w: malformed batch", ErrNotJSONRPC)
	}
	if SkipSpace(line, i+1) != len(line) {
		return msgs[:n0], fmt.Errorf("%w: trailing data", ErrNotJSONRPC)
	}
	return msgs, nil
}

// decodeObject decodes the object starting at b[i] (depth is the nesting
// around it) as one message with the semantics of jsonrpc.DecodeMessage:
// "method" present makes a request, otherwise it is a response and needs an
// ID; "jsonrpc" must be "2.0". It returns the index just past the object.
func decodeObject(b []byte, i, depth int) (jsonrpc.Message, int, error) {
	if i >= len(b) || b[i] != '{' {
		return nil, 0, ErrNotJSONRPC
	}
	start := i
	var (
		version, method            []byte
		hasMethod                  bool
		idRaw, params, result, err []byte
	)
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, 0, ErrNotJSONRPC
			}
			kEnd, e := skipString(b, i)
			if e != nil {
				return nil, 0, e
			}
			key := b[i:kEnd]
			i = SkipSpace(b, kEnd)
			if i >= len(b) || b[i] != ':' {
				return nil, 0, ErrNotJSONRPC
			}
			i = SkipSpace(b, i+1)
			vEnd, e := skipValue(b, i, depth+1)
			if e != nil {
				return nil, 0, e
			}
			val := b[i:vEnd]
			k := string(key[1 : len(key)-1])
			if bytes.IndexByte(key, '\\') >= 0 {
				k, _ = stringValue(key)
			}
			// Keys match exactly: go-sdk's decoder does not fold case.
			switch k {
			case "jsonrpc":
				version = val
			case "id":
				idRaw = val
			case "method":
				method, hasMethod = val, true
			case "params":
				params = val
			case "result":
				result = val
			case "error":
				err = val
			}
			i = SkipSpace(b, vEnd)
			if i < len(b) && b[i] == ',' {
				i = SkipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return nil, 0, ErrNotJSONRPC
		}
	}
	m, e := buildMessage(version, method, hasMethod, idRaw, params, result, err, b[start:i])
	return m, i, e
}

// buildMessage makes the message of the object obj from its members.
func buildMessage(version, method []byte, hasMethod bool, idRaw, params, result, err, obj []byte) (jsonrpc.Message, error) {
	if !valueIs(version, "2.0") {
		return nil, fmt.Errorf("%w: no \"jsonrpc\":\"2.0\"", ErrNotJSONRPC)
	}
	id, e := parseID(idRaw)
	if e != nil {
		return nil, e
	}
	if hasMethod {
		var m string
		if !isNull(method) { // "method":null decodes as "" in go-sdk
			var ok bool
			if m, ok = stringValue(method); !ok {
				return nil, fmt.Errorf("%w: method is not a string", ErrNotJSONRPC)
			}
		}
		return &jsonrpc.Request{ID: id, Method: m, Params: copyRaw(params)}, nil
	}
	if !id.IsValid() {
		return nil, fmt.Errorf("%w: response without an id", ErrNotJSONRPC)
	}
	resp := &jsonrpc.Response{ID: id, Result: copyRaw(result)}
	if len(err) > 0 && !isNull(err) {
		// Rare, and its decoding has details (exact key case, number forms) best left to
		// go-sdk's decoder, whose result this must be.
		m, derr := jsonrpc.DecodeMessage(obj)
		r, ok := m.(*jsonrpc.Response)
		if derr != nil || !ok {
			return nil, fmt.Errorf("%w: malformed error object", ErrNotJSONRPC)
		}
		if r.Error != nil {
			var we *jsonrpc.Error
			if !errors.As(r.Error, &we) {
				return nil, fmt.Errorf("%w: malformed error object", ErrNotJSONRPC)
			}
			resp.Error = we
		}
	}
	return resp, nil
}

// copyRaw returns a copy of a raw member value (nil if absent; a null stays
// "null", as go-sdk's decoder leaves it).
func copyRaw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func isNull(b []byte) bool { return string(b) == "null" }

// parseID parses an "id" member the way jsonrpc.MakeID sees go-sdk's decoding:
// absent or null is no ID, a number is truncated to int64, a string is kept.
func parseID(b []byte) (jsonrpc.ID, error) {
	if len(b) == 0 || isNull(b) {
		return jsonrpc.ID{}, nil
	}
	if b[0] == '"' {
		s, ok := stringValue(b)
		if !ok {
			return jsonrpc.ID{}, fmt.Errorf("%w: malformed id", ErrNotJSONRPC)
		}
		return jsonrpc.MakeID(s)
	}
	if len(b) < 16 && (b[0] >= '0' && b[0] <= '9' || b[0] == '-') {
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil && (b[0] != '0' || len(b) == 1) && string(b) != "-0" {
			return jsonrpc.MakeID(float64(n))
		}
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return jsonrpc.ID{}, fmt.Errorf("%w: id is not a string or number", ErrNotJSONRPC)
	}
	return jsonrpc.MakeID(f)
}

// stringValue returns the content of a JSON string token, unescaped.
func stringValue(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// SkipSpace returns the index of the first byte of b at or after i that is not JSON
// whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string token starting at b[i]
// (a '"').
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++ // the escaped byte; \uXXXX digits are plain bytes
		case c < 0x20:
			return 0, fmt.Errorf("%w: control character in string", ErrNotJSONRPC)
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", ErrNotJSONRPC)
}

// skipValue returns the index just past the JSON value starting at b[i],
// checking strings, bracket pairing and depth (depth is the nesting around
// it). Numbers and literals are checked for their alphabet only; go-sdk's
// decoder checks them fully when it decodes params or results.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: missing value", ErrNotJSONRPC)
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		var stack [64]byte
		open := stack[:0]
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				if depth+len(open) >= maxDepth {
					return 0, ErrTooDeep
				}
				open = append(open, c)
			case '}', ']':
				want := byte('{')
				if c == ']' {
					want = '['
				}
				if len(open) == 0 || open[len(open)-1] != want {
					return 0, fmt.Errorf("%w: mismatched %q", ErrNotJSONRPC, c)
				}
				open = open[:len(open)-1]
				if len(open) == 0 {
					return i + 1, nil
				}
			case ' ', '\t', '\r', '\n', ',', ':':
			default:
				if !literalByte(c) {
					return 0, fmt.Errorf("%w: unexpected byte %q", ErrNotJSONRPC, c)
				}
			}
			i++
		}
		return 0, fmt.Errorf("%w: unterminated value", ErrNotJSONRPC)
	case literalByte(c):
		j := i
		for j < len(b) && literalByte(b[j]) {
			j++
		}
		switch lit := string(b[i:j]); {
		case lit == "true" || lit == "false" || lit == "null":
		case c == '-' || c >= '0' && c <= '9':
			if !validNumber(b[i:j]) {
				return 0, fmt.Errorf("%w: malformed number", ErrNotJSONRPC)
			}
		default:
			return 0, fmt.Errorf("%w: unexpected literal", ErrNotJSONRPC)
		}
		return j, nil
	}
	return 0, fmt.Errorf("%w: unexpected byte %q", ErrNotJSONRPC, b[i])
}

// validNumber reports whether b is a JSON number (json.Valid's verdict, without its scanner).
func validNumber(b []byte) bool {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i + 1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(b)
}

func literalByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// AppendMessage appends msg's wire form and a newline to buf: the bytes
// jsonrpc.EncodeMessage produces (raw params and results are copied, not
// re-encoded; they are compacted only if they hold a line break).
func AppendMessage(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	var (
		id     jsonrpc.ID
		method string
		raw    []byte
		key    string
		wire   *jsonrpc.Error
	)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		id, method, raw, key = m.ID, m.Method, m.Params, `,"params":`
	case *jsonrpc.Response:
		id, raw, key = m.ID, m.Result, `,"result":`
		wire = toWireError(m.Error)
	default:
		return buf, fmt.Errorf("cannot encode message of type %T", msg)
	}
	switch v := id.Raw().(type) {
	case nil:
	case int64:
		buf = append(buf, `,"id":`...)
		buf = strconv.AppendInt(buf, v, 10)
	case string:
		buf = append(buf, `,"id":`...)
		buf = jsonstr.Append(buf, v)
	default:
		return buf, fmt.Errorf("invalid id type %T", v)
	}
	if method != "" {
		buf = append(buf, `,"method":`...)
		buf = jsonstr.Append(buf, method)
	}
	if len(raw) > 0 {
		buf = append(buf, key...)
		if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return buf, fmt.Errorf("encoding %s: %w", key[2:len(key)-2], err)
			}
			buf = append(buf, b.Bytes()...)
		} else {
			buf = append(buf, raw...)
		}
	}
	if wire != nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(wire); err != nil {
			return buf, fmt.Errorf("encoding error: %w", err)
		}
		buf = append(buf, `,"error":`...)
		buf = append(buf, bytes.TrimRight(b.Bytes(), "\n")...)
	}
	return append(buf, '}', '\n'), nil
}

// toWireError is go-sdk's conversion of a response error to its wire form.
func toWireError(err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	if w, ok := err.(*jsonrpc.Error); ok {
		return w
	}
	w := &jsonrpc.Error{Message: err.Error()}
	var wrapped *jsonrpc.Error
	if errors.As(err, &wrapped) {
		w.Code = wrapped.Code
	}
	return w
}

// DirectResult reads a line that is exactly a successful response to a direct call,
// {"jsonrpc":"2.0","id":<negative integer>,"result":<value>} in any order, with the same
// checks DecodeLine makes, and returns its ID and result without building a message.
// Anything else (an error response, another ID, an escaped or repeated key, a batch)
// reports false and takes DecodeLine's path.
func DirectResult(line []byte) (int64, []byte, bool) {
	i := SkipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return 0, nil, false
	}
	i = SkipSpace(line, i+1)
	var n int64
	var result []byte
	var haveVersion, haveID bool
	for {
		if i >= len(line) || line[i] != '"' {
			return 0, nil, false
		}
		kEnd, err := skipString(line, i)
		if err != nil {
			return 0, nil, false
		}
		key := line[i+1 : kEnd-1]
		i = SkipSpace(line, kEnd)
		if i >= len(line) || line[i] != ':' {
			return 0, nil, false
		}
		i = SkipSpace(line, i+1)
		vEnd, err := skipValue(line, i, 1)
		if err != nil {
			return 0, nil, false
		}
		val := line[i:vEnd]
		switch string(key) {
		case "jsonrpc":
			if haveVersion || string(val) != `"2.0"` {
				return 0, nil, false
			}
			haveVersion = true
		case "id":
			id, ok := negativeID(val)
			if haveID || !ok {
				return 0, nil, false
			}
			n, haveID = id, true
		case "result":
			if result != nil {
				return 0, nil, false
			}
			result = val
		default:
			return 0, nil, false
		}
		i = SkipSpace(line, vEnd)
		if i < len(line) && line[i] == ',' {
			i = SkipSpace(line, i+1)
			continue
		}
		if i < len(line) && line[i] == '}' {
			i++
			break
		}
		return 0, nil, false
	}
	if SkipSpace(line, i) != len(line) || !haveVersion || !haveID || result == nil {
		return 0, nil, false
	}
	return n, result, true
}

// negativeID parses an ID written as a negative integer without a fraction or exponent
// (what direct calls send), short enough to be exact.
func negativeID(b []byte) (int64, bool) {
	if len(b) < 2 || len(b) > 16 || b[0] != '-' || b[1] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range b[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return -n, true
}
