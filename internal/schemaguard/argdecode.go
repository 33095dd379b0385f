package schemaguard

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Small arguments (the common case: a handful of fields) are decoded for validation by a
// one-pass decoder over the bytes the argument check already found valid, instead of
// a streaming decoder (decodeJSON: a Decoder, its buffer and a reader per
// call, about 11 allocations for {"a":40,"b":2}). The value is the same: map[string]any,
// []any, string, json.Number, bool, nil; FuzzDecodeArgs checks that.

// Limits of the small-argument decoder; larger or deeper input takes decodeJSON's path.
const (
	smallArgsBytes = 4 << 10
	smallArgsDepth = 32
)

// DecodeArgs decodes arguments into the value the validator is given (numbers as
// json.Number), with decodeJSON's result and errors.
func DecodeArgs(args []byte) (any, error) {
	if len(args) <= smallArgsBytes && json.Valid(args) { // the decoder below trusts its input
		d := argDecoder{b: args}
		if v, ok := d.value(0); ok && d.skip() == len(args) {
			return v, nil
		}
	}
	return decodeJSON(args)
}

// argDecoder decodes JSON that json.Valid accepted; ok=false means "not handled here" (too
// deep, or a string encoding/json could not decode either).
type argDecoder struct {
	b []byte
	i int
}

func (d *argDecoder) skip() int {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
	return d.i
}

func (d *argDecoder) value(depth int) (any, bool) {
	if depth > smallArgsDepth || d.skip() >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		m := map[string]any{}
		if d.skip() < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return m, true
		}
		for {
			d.skip()
			k, ok := d.string()
			if !ok {
				return nil, false
			}
			if d.skip() >= len(d.b) || d.b[d.i] != ':' {
				return nil, false
			}
			d.i++
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			if d.skip() >= len(d.b) {
				return nil, false
			}
			if d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.b[d.i] == '}' {
				d.i++
				return m, true
			}
			return nil, false
		}
	case c == '[':
		d.i++
		a := []any{}
		if d.skip() < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return a, true
		}
		for {
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
			if d.skip() >= len(d.b) {
				return nil, false
			}
			if d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.b[d.i] == ']' {
				d.i++
				return a, true
			}
			return nil, false
		}
	case c == '"':
		s, ok := d.string()
		return s, ok
	case c == 't' && bytes.HasPrefix(d.b[d.i:], []byte("true")):
		d.i += 4
		return true, true
	case c == 'f' && bytes.HasPrefix(d.b[d.i:], []byte("false")):
		d.i += 5
		return false, true
	case c == 'n' && bytes.HasPrefix(d.b[d.i:], []byte("null")):
		d.i += 4
		return nil, true
	case c == '-' || c >= '0' && c <= '9':
		j := d.i
		for j < len(d.b) && (d.b[j] == '-' || d.b[j] == '+' || d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E' || d.b[j] >= '0' && d.b[j] <= '9') {
			j++
		}
		n := json.Number(d.b[d.i:j])
		d.i = j
		return n, true
	}
	return nil, false
}

// string decodes a string token without escapes; others go to encoding/json.
func (d *argDecoder) string() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	j := bytes.IndexByte(d.b[d.i+1:], '"')
	if j < 0 {
		return "", false
	}
	raw := d.b[d.i+1 : d.i+1+j]
	if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		// Escapes or invalid UTF-8 (which encoding/json replaces): leave it to the decoder.
		end := d.i + 1
		for end < len(d.b) {
			if d.b[end] == '\\' {
				end += 2
				continue
			}
			if d.b[end] == '"' {
				break
			}
			end++
		}
		if end >= len(d.b) {
			return "", false
		}
		var s string
		if json.Unmarshal(d.b[d.i:end+1], &s) != nil {
			return "", false
		}
		d.i = end + 1
		return s, true
	}
	d.i += j + 2
	return string(raw), true
}
