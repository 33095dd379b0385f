package wire

import (
	"bytes"
	"io"
)

// Unknown content on go-sdk's Streamable HTTP path. go-sdk's streamable client reads each
// response from an HTTP body (a whole application/json body, or one event of a
// text/event-stream) and decodes it only when the call returns, so there is no message to
// rewrite before it decodes (wrapping its Connection breaks the protocol-version header and
// the GET stream). The bodies are rewritten instead, before go-sdk reads them:
// ReplaceUnknownContentMessage for a JSON body, ReplaceUnknownContentSSE for an event
// stream.

// ReplaceUnknownContentMessage returns msg (one JSON-RPC message) with the content blocks
// go-sdk cannot decode in its result replaced (ReplaceUnknownContent), and whether any
// were; anything else (a request, an error, a batch, malformed bytes) comes back as itself.
func ReplaceUnknownContentMessage(msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, contentKey) {
		return msg, false
	}
	res, ok := memberValue(msg, "result")
	if !ok {
		return msg, false
	}
	if _, changed := ReplaceUnknownContent(res); !changed {
		return msg, false
	}
	out, ok := appendWithMember(make([]byte, 0, len(msg)+128), msg, "result", func(out, v []byte) []byte {
		v, _ = ReplaceUnknownContent(v)
		return append(out, v...)
	})
	if !ok {
		return msg, false
	}
	return out, true
}

// ReplaceUnknownContentSSE returns a reader of the event stream r in which each message
// event (no name, or "message") whose data is a response with content blocks go-sdk cannot
// decode has that data replaced (ReplaceUnknownContentMessage). Every other byte passes as
// the server sent it, and a rewritten event keeps its other fields (id, retry, comments)
// as sent. Lines are read as go-sdk v1.8.0 reads them (scanEventsLimited: a line ends in
// "\n", trailing "\r" and "\n" are trimmed, a blank line ends an event, data lines are
// whitespace-trimmed and joined with "\n"). An event is held back until it ends, which is
// when go-sdk can act on it; one of more than limit bytes (or one whose rewrite would be)
// passes untouched, as it comes, so that at most limit bytes are held.
func ReplaceUnknownContentSSE(r io.Reader, limit int) io.Reader {
	return &sseRewriter{r: r, limit: limit}
}

// sseRewriter is ReplaceUnknownContentSSE's reader.
type sseRewriter struct {
	r     io.Reader
	limit int
	buf   []byte // read from r
	ev    []byte // the current event's bytes so far (whole lines, then a partial one)
	line  int    // where the current line starts in ev
	pass  bool   // the current event is over limit: its bytes go out as they come
	blank bool   // in pass mode: the current line is blank so far
	out   []byte // ready for the reader
	off   int    // out[off:] is still to be read
	err   error  // r's error, once out is drained
}

func (s *sseRewriter) Read(p []byte) (int, error) {
	for s.off == len(s.out) && s.err == nil {
		s.out, s.off = s.out[:0], 0
		if cap(s.out) > keepBuffer {
			s.out = nil
		}
		// Read into the caller's buffer when it is large enough (go-sdk's bufio.Reader
		// reads 4 KiB at a time): feed copies what it keeps, and out goes into p after, so
		// an idle stream (subscriptions/listen, one per server) holds no buffer of its own.
		into := p
		if len(p) < minDirectRead {
			if s.buf == nil {
				s.buf = make([]byte, 4<<10) // a small answer is one read; a large one streams through
			}
			into = s.buf
		}
		n, err := s.r.Read(into)
		s.feed(into[:n])
		if err != nil {
			s.finish(err == io.EOF)
			s.err = err
		}
	}
	if s.off < len(s.out) {
		n := copy(p, s.out[s.off:])
		s.off += n
		return n, nil
	}
	return 0, s.err
}

// feed takes the next bytes of the stream.
func (s *sseRewriter) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i+1]
		}
		b = b[len(chunk):]
		if s.pass {
			s.out = append(s.out, chunk...)
			s.blank = s.blank && len(bytes.TrimRight(chunk, "\r\n")) == 0
			if i >= 0 {
				if s.blank {
					s.pass = false // the event ended: the next one is read again
				}
				s.blank = true
			}
			continue
		}
		s.ev = append(s.ev, chunk...)
		if len(s.ev) > s.limit {
			// Too large to hold: out it goes as it is, and the rest of the event as it comes.
			s.blank = len(bytes.TrimRight(s.ev[s.line:], "\r\n")) == 0
			s.out = append(s.out, s.ev...)
			s.ev, s.line, s.pass = s.ev[:0], 0, true
			if i >= 0 {
				if s.blank {
					s.pass = false
				}
				s.blank = true
			}
			continue
		}
		if i < 0 {
			return // a partial line
		}
		if len(bytes.TrimRight(s.ev[s.line:], "\r\n")) == 0 {
			s.endEvent(false)
			continue
		}
		s.line = len(s.ev)
	}
}

// finish ends the stream: at EOF a pending event is an event (go-sdk dispatches it), on
// another error its bytes go out as they were.
func (s *sseRewriter) finish(eof bool) {
	if len(s.ev) == 0 {
		return
	}
	if eof {
		s.endEvent(true)
		return
	}
	s.out = append(s.out, s.ev...)
	s.ev, s.line = s.ev[:0], 0
}

// endEvent writes the event in s.ev to s.out, rewritten when its data needs it; atEOF: the
// stream ended there (the event may lack its blank line, its last line its "\n").
func (s *sseRewriter) endEvent(atEOF bool) {
	ev := s.ev
	if fixed, ok := s.rewrite(ev, atEOF); ok {
		s.out = append(s.out, fixed...)
	} else {
		s.out = append(s.out, ev...)
	}
	s.ev, s.line = s.ev[:0], 0
	if cap(s.ev) > keepBuffer {
		s.ev = nil // a long-lived stream does not keep a large event's buffer
	}
}

// keepBuffer is the largest buffer an sseRewriter keeps between events.
const keepBuffer = 64 << 10

// minDirectRead is the smallest buffer of its reader's that an sseRewriter reads the
// stream into; into a smaller one it reads through a buffer of its own.
const minDirectRead = 512

// rewrite returns the event ev with its data replaced, when it is a message event whose
// data needs it and the result is within the limit.
func (s *sseRewriter) rewrite(ev []byte, atEOF bool) ([]byte, bool) {
	if !bytes.Contains(ev, contentKey) {
		return nil, false // the data cannot hold a content member
	}
	var name, data []byte
	haveData, copied := false, false
	for line := range bytes.Lines(ev) {
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 {
			continue
		}
		key, val, ok := bytes.Cut(l, []byte{':'})
		if !ok {
			return nil, false // malformed: go-sdk fails the stream on it
		}
		switch string(key) {
		case "event":
			name = bytes.TrimSpace(val)
		case "data":
			v := bytes.TrimSpace(val)
			switch {
			case !haveData:
				data = v // one line (the common case) is not copied
			case !copied:
				data = append(append(append(make([]byte, 0, len(data)+1+len(v)), data...), '\n'), v...)
				copied = true
			default:
				data = append(append(data, '\n'), v...)
			}
			haveData = true
		}
	}
	if len(data) == 0 || (len(name) > 0 && string(name) != "message") {
		return nil, false
	}
	fixed, ok := ReplaceUnknownContentMessage(data)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(ev)+len(fixed))
	var end []byte // the blank line that ended the event
	for line := range bytes.Lines(ev) {
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 {
			end = line
			continue
		}
		if key, _, _ := bytes.Cut(l, []byte{':'}); string(key) == "data" {
			continue
		}
		out = append(out, line...)
		if line[len(line)-1] != '\n' {
			out = append(out, '\n') // the stream's last line (atEOF)
		}
	}
	// The data as lines: a JSON text holds "\n" only between tokens, where trimming each
	// line's space changes nothing the decoder sees.
	for piece := range bytes.SplitSeq(fixed, []byte{'\n'}) {
		out = append(out, "data: "...)
		out = append(out, piece...)
		out = append(out, '\n')
	}
	if end != nil {
		out = append(out, end...)
	} else if !atEOF {
		return nil, false // cannot happen: an event ends with its blank line
	}
	if len(out) > s.limit {
		return nil, false
	}
	return out, true
}
