package results

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MinTruncateBytes is the smallest cap at which [Truncate] keeps both head and tail around its
// marker while staying within the cap. Below it, Truncate only keeps the head. [Flatten]
// raises any positive cap below it to it, so a flattened text always shows the marker when it
// was cut.
const MinTruncateBytes = 64

// Truncate returns s unchanged when max <= 0 or len(s) <= max. Otherwise it keeps the head and
// the tail of s around a marker that states how many bytes were cut, for example
//
//	"\n…[truncated 12345 bytes]…\n"
//
// and the result, marker included, is at most max bytes long. Cuts fall on UTF-8 sequence
// boundaries, so the result is valid UTF-8 whenever s is. For max < [MinTruncateBytes] there is
// no room for a useful marker: Truncate then returns the longest prefix of s that fits in max
// bytes without splitting a sequence (possibly "" when max is smaller than the first rune).
func Truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	p := pieces{list: []string{s}, n: len(s)}
	return p.truncate(max)
}

// pieces is a string made of parts, so that large results can be cut without first being
// joined into one big string.
type pieces struct {
	list    []string
	n       int  // total length in bytes
	started bool // a block has been added; the next block starts on a new line
}

// add appends s, replacing invalid UTF-8 with U+FFFD.
func (p *pieces) add(s string) {
	if s == "" {
		return
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	p.list = append(p.list, s)
	p.n += len(s)
}

// block starts a new line (unless it is the first block) and appends s.
func (p *pieces) block(s string) {
	if p.started {
		p.add("\n")
	}
	p.started = true
	p.add(s)
}

// at returns the byte at offset i, 0 <= i < p.n.
func (p *pieces) at(i int) byte {
	for _, s := range p.list {
		if i < len(s) {
			return s[i]
		}
		i -= len(s)
	}
	return 0
}

// write appends bytes [from, to) to b.
func (p *pieces) write(b *strings.Builder, from, to int) {
	off := 0
	for _, s := range p.list {
		if off >= to {
			return
		}
		lo, hi := max(from-off, 0), min(to-off, len(s))
		if lo < hi {
			b.WriteString(s[lo:hi])
		}
		off += len(s)
	}
}

// String joins the pieces, cut by truncate when limit > 0 and the total exceeds it.
func (p *pieces) String(limit int) string {
	if limit > 0 && p.n > limit {
		return p.truncate(limit)
	}
	if len(p.list) == 1 {
		return p.list[0]
	}
	var b strings.Builder
	b.Grow(p.n)
	for _, s := range p.list {
		b.WriteString(s)
	}
	return b.String()
}

// truncate implements Truncate for limit < p.n.
func (p *pieces) truncate(limit int) string {
	var b strings.Builder
	if limit < MinTruncateBytes {
		h := p.runeStartBack(limit)
		b.Grow(h)
		p.write(&b, 0, h)
		return b.String()
	}
	// The marker for the real cut is never longer than the one for p.n, as cut <= p.n.
	keep := limit - markerLen(p.n)
	head := (keep + 1) / 2
	tail := keep - head
	h := p.runeStartBack(head)
	t := p.runeStartForward(p.n - tail)
	cut := t - h
	b.Grow(h + markerLen(cut) + p.n - t)
	p.write(&b, 0, h)
	b.WriteString("\n…[truncated ")
	b.WriteString(strconv.Itoa(cut))
	b.WriteString(" bytes]…\n")
	p.write(&b, t, p.n)
	return b.String()
}

// markerLen is the length of the truncation marker for cut bytes.
func markerLen(cut int) int {
	return len("\n…[truncated ") + len(strconv.Itoa(cut)) + len(" bytes]…\n")
}

// runeStartBack moves i back to the start of the UTF-8 sequence it falls in, so that the
// bytes before i hold whole sequences. At most utf8.UTFMax-1 steps: invalid input is cut as is.
func (p *pieces) runeStartBack(i int) int {
	for k := 0; k < utf8.UTFMax-1 && i > 0 && i < p.n && !utf8.RuneStart(p.at(i)); k++ {
		i--
	}
	return i
}

// runeStartForward moves i forward to the next sequence start, so that the bytes from i on
// hold whole sequences.
func (p *pieces) runeStartForward(i int) int {
	for k := 0; k < utf8.UTFMax-1 && i < p.n && !utf8.RuneStart(p.at(i)); k++ {
		i++
	}
	return i
}
