package wire

import "bytes"

// Scanning JSON without decoding it: the members of an object and the elements of an
// array, as raw bytes, checked for structure by skipValue (framing.go). Iterators rather than
// callbacks, so that a caller's locals stay on its stack.

// objectScan walks the members of one JSON object.
type objectScan struct {
	b     []byte
	i     int
	first bool
	bad   bool
	done  bool
}

// scanObject starts a walk over b, which must be one whole JSON object.
func scanObject(b []byte) objectScan {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return objectScan{bad: true, done: true}
	}
	return objectScan{b: b, i: SkipSpace(b, i+1), first: true}
}

// next returns the next member: its key token (with quotes, still escaped) and raw value.
// ok is false at the end or on malformed input (then valid reports false).
func (s *objectScan) next() (key, val []byte, ok bool) {
	if s.done {
		return nil, nil, false
	}
	b, i := s.b, s.i
	if s.first {
		s.first = false
		if i < len(b) && b[i] == '}' {
			s.done, s.bad = true, SkipSpace(b, i+1) != len(b)
			return nil, nil, false
		}
	} else {
		switch {
		case i < len(b) && b[i] == ',':
			i = SkipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			s.done, s.bad = true, SkipSpace(b, i+1) != len(b)
			return nil, nil, false
		default:
			s.done, s.bad = true, true
			return nil, nil, false
		}
	}
	if i >= len(b) || b[i] != '"' {
		s.done, s.bad = true, true
		return nil, nil, false
	}
	kEnd, err := skipString(b, i)
	if err != nil {
		s.done, s.bad = true, true
		return nil, nil, false
	}
	key = b[i:kEnd]
	i = SkipSpace(b, kEnd)
	if i >= len(b) || b[i] != ':' {
		s.done, s.bad = true, true
		return nil, nil, false
	}
	i = SkipSpace(b, i+1)
	vEnd, err := skipValue(b, i, 1)
	if err != nil {
		s.done, s.bad = true, true
		return nil, nil, false
	}
	val = b[i:vEnd]
	s.i = SkipSpace(b, vEnd)
	return key, val, true
}

// valid reports, after next returned false, whether the object was well formed.
func (s *objectScan) valid() bool { return s.done && !s.bad }

// keyIs reports whether the key token k (with quotes) is want once unescaped.
func keyIs(k []byte, want string) bool {
	if len(k) < 2 {
		return false
	}
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == want
	}
	s, ok := stringValue(k)
	return ok && s == want
}

// valueIs reports whether the JSON value token v is the string want, without allocating.
func valueIs(v []byte, want string) bool {
	return len(v) >= 2 && v[0] == '"' && keyIs(v, want)
}

// keyString returns the key token k unescaped.
func keyString(k []byte) (string, bool) { return stringValue(k) }

// arrayScan walks the elements of one JSON array.
type arrayScan struct {
	b     []byte
	i     int
	first bool
	bad   bool
	done  bool
}

// scanArray starts a walk over b, which must be one whole JSON array.
func scanArray(b []byte) arrayScan {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return arrayScan{bad: true, done: true}
	}
	return arrayScan{b: b, i: SkipSpace(b, i+1), first: true}
}

// next returns the next element; ok is false at the end or on malformed input.
func (s *arrayScan) next() (elem []byte, ok bool) {
	if s.done {
		return nil, false
	}
	b, i := s.b, s.i
	if s.first {
		s.first = false
		if i < len(b) && b[i] == ']' {
			s.done, s.bad = true, SkipSpace(b, i+1) != len(b)
			return nil, false
		}
	} else {
		switch {
		case i < len(b) && b[i] == ',':
			i = SkipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			s.done, s.bad = true, SkipSpace(b, i+1) != len(b)
			return nil, false
		default:
			s.done, s.bad = true, true
			return nil, false
		}
	}
	end, err := skipValue(b, i, 1)
	if err != nil {
		s.done, s.bad = true, true
		return nil, false
	}
	s.i = SkipSpace(b, end)
	return b[i:end], true
}

// valid reports, after next returned false, whether the array was well formed.
func (s *arrayScan) valid() bool { return s.done && !s.bad }

// forMembers calls fn for each member of the JSON object b (whole), in order, with the
// key unescaped and the raw value; it reports false if b is not an object or fn refused.
func forMembers(b []byte, fn func(key string, val []byte) bool) bool {
	s := scanObject(b)
	for {
		k, v, ok := s.next()
		if !ok {
			return s.valid()
		}
		key, kok := keyString(k)
		if !kok || !fn(key, v) {
			return false
		}
	}
}

// memberValue returns the value of the last member named key of the JSON object b.
func memberValue(b []byte, key string) ([]byte, bool) {
	s := scanObject(b)
	var (
		val   []byte
		found bool
	)
	for {
		k, v, ok := s.next()
		if !ok {
			return val, found && s.valid()
		}
		if keyIs(k, key) {
			val, found = v, true
		}
	}
}
