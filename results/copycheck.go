package results

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

// This file is rule 1's copy check: whether a text block says nothing the structured
// content does not (see the package documentation for the rule). Both sides come from the
// server, so every step is bounded and linear in what it reads: the index of the structured
// content by maxIndexNodes and maxIndexDepth, the scan of one block by workPerByte times its
// length, all blocks of one result together by maxCheckWork. Whatever runs out of budget
// keeps the block.

const (
	// maxIndexNodes caps the values of the structured content indexed as members; values
	// past it (and the objects and arrays holding them) are not members.
	maxIndexNodes = 200_000
	// maxIndexDepth: values nested deeper than this are not members, nor are their
	// ancestors; a text block nested deeper matches nothing.
	maxIndexDepth = 64
	// maxScanBytes: a longer text block is only compared whole ((a) and (b)), never scanned
	// as a concatenation.
	maxScanBytes = 1 << 20
	// workPerByte is the scan budget of a block per byte of it (bytes compared, JSON parsed,
	// positions tried).
	workPerByte = 16
	// maxCheckWork caps the work of all the blocks of one result, the index included.
	maxCheckWork = 64 << 20
	// prefixLen is the length of the prefix the string members and keys are indexed by.
	prefixLen = 8
)

// copyCheck decides whether a text block is a copy of the structured content (rule 1).
type copyCheck struct {
	compact string // the structured content as the model reads it (compact JSON)
	value   any    // the structured content as given
	norm    any    // value as generic JSON (maps, slices, float64, ...); set by normalized
	state   int    // 0: norm not computed, 1: ok, -1: unavailable

	indexed bool
	work    int // budget left for this result (maxCheckWork)
	seed    maphash.Seed
	byHash  map[uint64][]any    // members by structural hash (memberHash)
	strs    map[string]struct{} // string members, as they are and trimmed
	nums    map[float64]struct{}
	vals    prefixIndex // string members, by their first bytes
	keys    prefixIndex // object keys, by their first bytes in ASCII lower case
	keySet  map[string]struct{}
	nodes   int
}

// newCopyCheck returns the check for structured content value whose compact JSON (as the
// model reads it) is compact.
func newCopyCheck(compact string, value any) *copyCheck {
	return &copyCheck{compact: compact, value: value, work: maxCheckWork}
}

// matches reports whether text says nothing the structured content does not: see rule 1.
func (e *copyCheck) matches(text string) bool {
	if fieldsEqual(text, e.compact) {
		return true
	}
	if s, ok := e.value.(string); ok && fieldsEqual(text, s) {
		return true
	}
	norm, ok := e.normalized()
	if !ok {
		return false
	}
	// (b) first against the whole value, which needs no index.
	var v any
	parsed := false
	if i := skipSpace(text, 0); i < len(text) && strings.IndexByte(`{["-0123456789`, text[i]) >= 0 && len(text) <= e.work {
		e.work -= len(text)
		if parsed = json.Unmarshal([]byte(text), &v) == nil; parsed && equalJSON(v, norm, 0) {
			return true
		}
	}
	if !e.index() {
		return false
	}
	if _, ok := e.strs[text]; ok {
		return true
	}
	if _, ok := e.strs[strings.TrimSpace(text)]; ok {
		return true
	}
	if parsed {
		return e.member(v) // one JSON value: equal to a member, or a fact of its own
	}
	if len(text) > maxScanBytes || e.work < len(text) {
		return false
	}
	budget := min(e.work, workPerByte*len(text)+1024)
	sc := scan{e: e, text: text, budget: budget}
	ok = sc.concatenation()
	e.work -= budget - sc.budget
	return ok
}

// normalized returns the structured content as json.Unmarshal into an any would give it.
func (e *copyCheck) normalized() (any, bool) {
	if e.state == 0 {
		e.state = -1
		if isGeneric(e.value, 0) {
			e.norm, e.state = e.value, 1
		} else if err := json.Unmarshal([]byte(e.compact), &e.norm); err == nil {
			e.state = 1
		}
	}
	return e.norm, e.state == 1
}

// index builds the member index on first use; false when the structured content is not
// available as generic JSON.
func (e *copyCheck) index() bool {
	if e.indexed {
		return e.byHash != nil
	}
	e.indexed = true
	norm, ok := e.normalized()
	if !ok {
		return false
	}
	e.seed = maphash.MakeSeed()
	e.byHash = make(map[uint64][]any)
	e.strs = make(map[string]struct{})
	e.nums = make(map[float64]struct{})
	e.keySet = make(map[string]struct{})
	e.add(norm, 0)
	e.vals.sort()
	e.keys.sort()
	e.work -= e.nodes
	return true
}

// add indexes v and everything in it, and returns v's hash; ok is false when v is past the
// bounds (then it is not a member, nor anything holding it).
func (e *copyCheck) add(v any, depth int) (uint64, bool) {
	if depth > maxIndexDepth || e.nodes >= maxIndexNodes {
		return 0, false
	}
	e.nodes++
	var h uint64
	ok := true
	switch v := v.(type) {
	case string:
		if v != "" {
			e.strs[v] = struct{}{}
			e.strs[strings.TrimSpace(v)] = struct{}{}
			e.vals.add(v, false)
		}
		h = e.hashString(v)
	case float64:
		e.nums[v] = struct{}{}
		h = e.hashScalar(v)
	case []any:
		h = e.mix(tagArray, uint64(len(v)), 0)
		for _, c := range v {
			ch, cok := e.add(c, depth+1)
			ok = ok && cok
			h = e.mix(tagArray, h, ch)
		}
	case map[string]any:
		var sum uint64
		for k, c := range v {
			if _, seen := e.keySet[k]; !seen {
				e.keySet[k] = struct{}{}
				e.keys.add(k, true)
			}
			ch, cok := e.add(c, depth+1)
			ok = ok && cok
			sum += e.mix(tagMember, e.hashString(k), ch)
		}
		h = e.mix(tagObject, sum, uint64(len(v)))
	default: // nil, bool
		h = e.hashScalar(v)
	}
	if ok {
		e.byHash[h] = append(e.byHash[h], v)
	}
	return h, ok
}

// Tags of memberHash's mixing, so that values of different kinds hash apart.
const (
	tagNull = iota + 1
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagArray
	tagMember
	tagObject
)

// memberHash hashes a generic JSON value as add does: equal values (equalJSON) hash alike,
// whatever their objects' key order. ok is false past maxIndexDepth.
func (e *copyCheck) memberHash(v any, depth int) (uint64, bool) {
	if depth > maxIndexDepth {
		return 0, false
	}
	switch v := v.(type) {
	case string:
		return e.hashString(v), true
	case []any:
		h := e.mix(tagArray, uint64(len(v)), 0)
		for _, c := range v {
			ch, ok := e.memberHash(c, depth+1)
			if !ok {
				return 0, false
			}
			h = e.mix(tagArray, h, ch)
		}
		return h, true
	case map[string]any:
		var sum uint64
		for k, c := range v {
			ch, ok := e.memberHash(c, depth+1)
			if !ok {
				return 0, false
			}
			sum += e.mix(tagMember, e.hashString(k), ch)
		}
		return e.mix(tagObject, sum, uint64(len(v))), true
	}
	return e.hashScalar(v), true
}

func (e *copyCheck) hashString(s string) uint64 {
	return e.mix(tagString, maphash.String(e.seed, s), uint64(len(s)))
}

func (e *copyCheck) hashScalar(v any) uint64 {
	switch v := v.(type) {
	case bool:
		if v {
			return e.mix(tagTrue, 0, 0)
		}
		return e.mix(tagFalse, 0, 0)
	case float64:
		if v == 0 {
			v = 0 // -0 equals 0
		}
		return e.mix(tagNumber, math.Float64bits(v), 0)
	}
	return e.mix(tagNull, 0, 0)
}

// mix hashes a tag and two words with the check's seed.
func (e *copyCheck) mix(tag byte, a, b uint64) uint64 {
	var buf [17]byte
	buf[0] = tag
	binary.LittleEndian.PutUint64(buf[1:], a)
	binary.LittleEndian.PutUint64(buf[9:], b)
	return maphash.Bytes(e.seed, buf[:])
}

// member reports whether v (generic JSON) equals a member of the structured content that
// is an object, an array, a string or a number.
func (e *copyCheck) member(v any) bool {
	switch v.(type) {
	case nil, bool:
		return false
	}
	h, ok := e.memberHash(v, 0)
	if !ok {
		return false
	}
	for _, m := range e.byHash[h] {
		if equalJSON(v, m, 0) {
			return true
		}
	}
	return false
}

// prefixIndex finds which of a set of strings a text continues with, longest first:
// strings shorter than prefixLen are keyed by themselves, longer ones by their first
// prefixLen bytes (in ASCII lower case for keys).
type prefixIndex struct {
	m     map[string][]string
	first [256]bool // the first bytes of the strings (in lower case for keys)
}

func (p *prefixIndex) add(s string, fold bool) {
	if s == "" {
		return
	}
	if p.m == nil {
		p.m = make(map[string][]string)
	}
	k := s[:min(len(s), prefixLen)]
	if fold {
		k = lowerASCII(k)
	}
	p.first[k[0]] = true
	p.m[k] = append(p.m[k], s)
}

// sort puts each list longest first, without duplicates.
func (p *prefixIndex) sort() {
	for k, l := range p.m {
		slices.SortFunc(l, func(a, b string) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return strings.Compare(a, b)
		})
		p.m[k] = slices.Compact(l)
	}
}

// longest returns the length of the longest indexed string that text[i:] starts with and
// that ends on a word boundary of text, or 0; each candidate compared costs its length.
func (p *prefixIndex) longest(text string, i int, fold bool, budget *int) int {
	if p.m == nil || (!p.first[text[i]] && !(fold && p.first[lowerByte(text[i])])) {
		return 0
	}
	var buf [prefixLen]byte
	n := copy(buf[:], text[i:])
	if fold {
		for j := range n {
			buf[j] = lowerByte(buf[j])
		}
	}
	for k := n; k >= 1; k-- {
		for _, s := range p.m[string(buf[:k])] {
			*budget -= len(s)
			if *budget < 0 {
				return 0
			}
			if len(s) > len(text)-i {
				continue
			}
			got := text[i : i+len(s)]
			if (fold && !equalFoldASCII(got, s)) || (!fold && got != s) {
				continue
			}
			if boundary(text, i+len(s)) {
				return len(s)
			}
		}
	}
	return 0
}

// scan is the check of one text block against the index.
type scan struct {
	e      *copyCheck
	text   string
	budget int
}

// concatenation reports whether the block is made of members, keys and glue only, with at
// least one member (rule 1's concatenation).
func (s *scan) concatenation() bool {
	text := s.text
	values := 0
	for i := 0; i < len(text); {
		s.budget--
		if s.budget < 0 {
			return false
		}
		n, isValue := s.piece(i)
		if n < 0 {
			return false
		}
		if n > 0 {
			i += n
			if isValue {
				values++
			}
			continue
		}
		if n := glue(text, i); n > 0 {
			i += n
			continue
		}
		return false
	}
	return values > 0
}

// piece matches a member or a key at text[i:] and returns its length (0: none; -1: JSON
// that is neither, which the block says of its own) and whether it is a member (not a key).
func (s *scan) piece(i int) (n int, isValue bool) {
	text := s.text
	switch c := text[i]; {
	case c == '{' || c == '[' || c == '"':
		if n, v, ok := s.jsonValue(i); ok {
			if s.e.member(v) {
				return n, true
			}
			if str, isStr := v.(string); isStr {
				if _, key := s.e.keySet[str]; key {
					return n, false // a quoted key: a label
				}
			}
			return -1, false // JSON of something else: a fact, never glue
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if n := numberLen(text, i); n > 0 && numberEnds(text, i+n) {
			if f, err := strconv.ParseFloat(text[i:i+n], 64); err == nil {
				if _, ok := s.e.nums[f]; ok {
					return n, true
				}
			}
		}
	}
	if n := s.e.vals.longest(text, i, false, &s.budget); n > 0 {
		return n, true
	}
	if n := s.e.keys.longest(text, i, true, &s.budget); n > 0 {
		return n, false
	}
	return 0, false
}

// jsonValue decodes the one JSON value (object, array or string) that starts at text[i],
// charging what the decoder read.
func (s *scan) jsonValue(i int) (int, any, bool) {
	dec := json.NewDecoder(strings.NewReader(s.text[i:]))
	var v any
	err := dec.Decode(&v)
	n := int(dec.InputOffset())
	if err != nil {
		n = len(s.text) - i
	}
	s.budget -= n
	if err != nil || s.budget < 0 || n == 0 {
		return 0, nil, false
	}
	if !boundary(s.text, i+n) {
		return 0, nil, false
	}
	return n, v, true
}

// glue returns the length of the glue at text[i:] (0: none): a whitespace byte, a
// separator (one of `: , ; = | ( ) [ ] { } " ' ` + "`" + `), or a run of marks (one of
// `- * # > . •`) followed by whitespace, a separator or the end.
func glue(text string, i int) int {
	c := text[i]
	if isSpace(c) || strings.IndexByte(":,;=|()[]{}\"'`", c) >= 0 {
		return 1
	}
	j := i
	for j < len(text) {
		if strings.IndexByte("-*#>.", text[j]) >= 0 {
			j++
			continue
		}
		if r, size := utf8.DecodeRuneInString(text[j:]); r == '•' {
			j += size
			continue
		}
		break
	}
	if j == i {
		return 0
	}
	if j == len(text) || isSpace(text[j]) || strings.IndexByte(":,;=|()[]{}\"'`", text[j]) >= 0 {
		return j - i
	}
	return 0
}

// numberLen returns the length of the JSON-like number at text[i:] (an optional minus,
// digits, an optional fraction and exponent), or 0.
func numberLen(text string, i int) int {
	j := i
	if j < len(text) && text[j] == '-' {
		j++
	}
	d := j
	for j < len(text) && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	if j == d {
		return 0
	}
	if j+1 < len(text) && text[j] == '.' && text[j+1] >= '0' && text[j+1] <= '9' {
		j += 2
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
	}
	if j < len(text) && (text[j] == 'e' || text[j] == 'E') {
		k := j + 1
		if k < len(text) && (text[k] == '+' || text[k] == '-') {
			k++
		}
		if k < len(text) && text[k] >= '0' && text[k] <= '9' {
			for k < len(text) && text[k] >= '0' && text[k] <= '9' {
				k++
			}
			j = k
		}
	}
	return j - i
}

// numberEnds reports whether a number may end at text[i]: not before a word byte, a
// decimal point and digit, or a sign.
func numberEnds(text string, i int) bool {
	if i == len(text) {
		return true
	}
	c := text[i]
	if isWordByte(c) || c == '+' || c == '-' {
		return false
	}
	return c != '.' || i+1 == len(text) || text[i+1] < '0' || text[i+1] > '9'
}

// boundary reports whether a match may end at text[i]: the end, or not between two word
// bytes.
func boundary(text string, i int) bool {
	return i == len(text) || i == 0 || !isWordByte(text[i-1]) || !isWordByte(text[i])
}

// isWordByte reports whether c belongs to a word: an ASCII letter or digit, '_', or a byte
// of a multi-byte UTF-8 sequence.
func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lowerByte(a[i]) != lowerByte(b[i]) {
			return false
		}
	}
	return true
}

// compactRaw returns raw (the structured content as the server sent it) compacted, or ok
// false when it is not one valid JSON value. Keys stay in the server's order and numbers as
// it wrote them; strings are spelt as everywhere else in the text (jsonstr: escapes such as
// \u003c decoded, no HTML escaping), so the model reads "<", not "\u003c".
func compactRaw(raw []byte) (string, bool) {
	if !json.Valid(raw) {
		return "", false
	}
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case isSpace(c):
		case c == '"':
			j, escaped := stringEnd(raw, i)
			if !escaped {
				b = append(b, raw[i:j]...)
			} else {
				var str string
				if json.Unmarshal(raw[i:j], &str) != nil {
					return "", false // unreachable: raw is valid
				}
				b = jsonstr.Append(b, str)
			}
			i = j - 1
		default:
			b = append(b, c)
		}
	}
	return string(b), len(b) > 0
}

// stringEnd returns the index just past the JSON string that starts at raw[i] (raw is
// valid JSON), and whether it holds an escape.
func stringEnd(raw []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(raw), escaped
}
