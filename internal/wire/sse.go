package wire

import (
	"bytes"
	"strconv"
	"time"
)

// SSEParser incrementally parses a text/event-stream body the way go-sdk v1.8.0
// does (mcp/event.go scanEventsLimited), so it yields exactly the events go-sdk
// delivers: lines end in "\n" (a trailing "\r" is trimmed); a blank line ends
// an event; "event" and "data" values are whitespace-trimmed; several data
// lines are joined with "\n"; a line without ':' is malformed and ends
// parsing (go-sdk fails the stream); an event of more than Limit bytes
// (counting line bytes, as go-sdk does) ends parsing; at EOF a pending event
// is dispatched. OnEvent gets the event name and data for every event with
// data (when set); data is only valid during the call. OnOverflow (when set) is
// called once when an event exceeds Limit. LastID and Retry are the "id" and "retry"
// fields of the last event dispatched that had them (as go-sdk reads them: the value
// trimmed; a retry that is no decimal number is ignored), for resuming a stream.
type SSEParser struct {
	Limit      int
	OnEvent    func(name string, data []byte)
	OnOverflow func()
	LastID     string
	Retry      time.Duration

	id, retry string // the current event's "id" and "retry" fields

	line     []byte // current partial line
	evBytes  int    // bytes of the current event so far
	name     string
	data     []byte
	haveData bool
	dead     bool // malformed or oversized: ignore the rest
	over     bool // an event exceeded limit
}

// Write parses the next bytes of the stream.
func (p *SSEParser) Write(b []byte) {
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

func (p *SSEParser) appendLine(b []byte) {
	if p.evBytes+len(p.line)+len(b) > p.Limit {
		p.overflow()
		return
	}
	p.line = append(p.line, b...)
}

func (p *SSEParser) kill() {
	p.dead = true
	p.line, p.data = nil, nil
}

// overflow ends parsing because an event is over the limit.
func (p *SSEParser) overflow() {
	p.kill()
	p.over = true
	if p.OnOverflow != nil {
		p.OnOverflow()
	}
}

func (p *SSEParser) processLine(line []byte) {
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
	case "id":
		p.id = string(bytes.TrimSpace(val))
	case "retry":
		p.retry = string(bytes.TrimSpace(val))
	case "data":
		if p.haveData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, bytes.TrimSpace(val)...)
		p.haveData = true
	}
}

func (p *SSEParser) dispatch() {
	if p.id != "" {
		p.LastID, p.id = p.id, ""
	}
	if p.retry != "" {
		if n, err := strconv.ParseInt(p.retry, 10, 64); err == nil && n >= 0 {
			p.Retry = time.Duration(min(n, int64(maxRetryField/time.Millisecond))) * time.Millisecond
		}
		p.retry = ""
	}
	if p.haveData && len(p.data) > 0 && p.OnEvent != nil {
		p.OnEvent(p.name, p.data)
	}
	p.name, p.data, p.haveData = "", p.data[:0], false
}

// maxRetryField bounds the reconnection delay a server's "retry" field may ask for.
const maxRetryField = 30 * time.Second

// Finish ends the stream (EOF): a pending event is dispatched.
func (p *SSEParser) Finish() {
	if p.dead {
		return
	}
	if len(p.line) > 0 {
		line := p.line
		p.evBytes += len(line)
		if p.evBytes > p.Limit {
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

// Over reports whether an event exceeded Limit.
func (p *SSEParser) Over() bool { return p.over }

// Dead reports whether parsing ended: a malformed line or an event over Limit.
func (p *SSEParser) Dead() bool { return p.dead }
