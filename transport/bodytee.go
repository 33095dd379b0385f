package transport

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// bodySink consumes a response body as it is read.
type bodySink interface {
	write(p []byte)
	finish() // the body reached EOF
}

// teeBody passes a response body through to its reader (go-sdk) and feeds
// every byte read to a sink, synchronously, so the sink has seen a message
// before the reader can act on it. Nothing is buffered ahead of the reader.
type teeBody struct {
	rc   io.ReadCloser
	sink bodySink
	once sync.Once
	// stop, when set, is asked before each read; a non-nil error ends the body there (and
	// closes it), so a reader draining an endless body stops.
	stop func() error
}

func (t *teeBody) Read(p []byte) (int, error) {
	if t.stop != nil {
		if err := t.stop(); err != nil {
			_ = t.rc.Close()
			return 0, err
		}
	}
	n, err := t.rc.Read(p)
	if n > 0 {
		t.sink.write(p[:n])
	}
	if errors.Is(err, io.EOF) {
		t.once.Do(t.sink.finish)
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// jsonSink accumulates an application/json body (up to limit bytes) and hands
// it to onBody at EOF. Bodies over the limit are dropped.
type jsonSink struct {
	buf    []byte
	limit  int
	over   bool
	onBody func([]byte)
}

func (s *jsonSink) write(p []byte) {
	if s.over {
		return
	}
	if len(s.buf)+len(p) > s.limit {
		s.over, s.buf = true, nil
		return
	}
	s.buf = append(s.buf, p...)
}

func (s *jsonSink) finish() {
	if !s.over {
		s.onBody(s.buf)
	}
	s.buf = nil
}

// sseParser incrementally parses a text/event-stream body the way go-sdk v1.8.0
// does (mcp/event.go scanEventsLimited), so it yields exactly the events go-sdk
// delivers: lines end in "\n" (a trailing "\r" is trimmed); a blank line ends
// an event; "event" and "data" values are whitespace-trimmed; several data
// lines are joined with "\n"; a line without ':' is malformed and ends
// parsing (go-sdk fails the stream); an event of more than limit bytes
// (counting line bytes, as go-sdk does) ends parsing; at EOF a pending event
// is dispatched. onEvent gets the event name and data for every event with
// data (when set); data is only valid during the call. onOverflow (when set) is
// called once when an event exceeds limit.
type sseParser struct {
	limit      int
	onEvent    func(name string, data []byte)
	onOverflow func()

	line     []byte // current partial line
	evBytes  int    // bytes of the current event so far
	name     string
	data     []byte
	haveData bool
	dead     bool // malformed or oversized: ignore the rest
	over     bool // an event exceeded limit
}

func (p *sseParser) write(b []byte) {
	for len(b) > 0 && !p.dead {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.appendLine(b)
			return
		}
		p.appendLine(b[:i+1])
		b = b[i+1:]
		if p.dead {
			return
		}
		line := p.line
		p.line = p.line[:0]
		p.evBytes += len(line)
		p.processLine(bytes.TrimRight(line, "\r\n"))
	}
}

func (p *sseParser) appendLine(b []byte) {
	if p.evBytes+len(p.line)+len(b) > p.limit {
		p.overflow()
		return
	}
	p.line = append(p.line, b...)
}

func (p *sseParser) kill() {
	p.dead = true
	p.line, p.data = nil, nil
}

// overflow ends parsing because an event is over the limit.
func (p *sseParser) overflow() {
	p.kill()
	p.over = true
	if p.onOverflow != nil {
		p.onOverflow()
	}
}

func (p *sseParser) processLine(line []byte) {
	if len(line) == 0 {
		p.dispatch()
		p.evBytes = 0
		return
	}
	key, val, ok := bytes.Cut(line, []byte{':'})
	if !ok {
		p.kill()
		return
	}
	switch string(key) {
	case "event":
		p.name = string(bytes.TrimSpace(val))
	case "data":
		if p.haveData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, bytes.TrimSpace(val)...)
		p.haveData = true
	}
}

func (p *sseParser) dispatch() {
	if p.haveData && len(p.data) > 0 && p.onEvent != nil {
		p.onEvent(p.name, p.data)
	}
	p.name, p.data, p.haveData = "", p.data[:0], false
}

func (p *sseParser) finish() {
	if p.dead {
		return
	}
	if len(p.line) > 0 {
		line := p.line
		p.evBytes += len(line)
		if p.evBytes > p.limit {
			p.overflow()
			return
		}
		p.processLine(bytes.TrimRight(line, "\r\n"))
		p.line = nil
	}
	if !p.dead {
		p.dispatch()
	}
}
