package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/wire"
)

// Buffer sizes of the stdio connection: reads go into one buffer that starts
// at readChunk and grows (doubling) to hold the longest frame seen, up to the
// frame limit; a write buffer is kept between writes up to keepWriteBuf.
const (
	readChunk    = 16 << 10
	minRead      = 4 << 10
	keepReadBuf  = 256 << 10
	keepWriteBuf = 64 << 10
)

// Non-protocol stdout lines: how many bytes of each are logged, how many are
// logged at once, and how often one is logged after that.
const (
	noiseLogBytes = 200
	noiseBurst    = 5
	noiseEvery    = 10 * time.Second
)

// ErrFrameTooLarge is the read error of a stdio session whose server sent a
// JSON-RPC message longer than Spec.MaxFrameBytes. The session ends with it.
var ErrFrameTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// stdioConn is the mcp.Connection of a stdio server: newline-delimited
// JSON-RPC over the process's pipes. It replaces go-sdk's ioConn:
//   - Read reads into one reused buffer on the caller's goroutine (go-sdk's
//     jsonrpc2 reader), so a message costs no goroutine hand-off; Close
//     unblocks it by closing the pipe.
//   - Lines are decoded by decodeLine, without go-sdk's two 32 KB decoder
//     buffers per message.
//   - A line that is not a JSON-RPC message (a banner or log line a server
//     prints on stdout) is counted, logged (rate-limited, escaped) and
//     skipped, as the TypeScript SDK's client does, instead of ending the
//     session. Such a line is never buffered beyond noiseLogBytes, so a flood
//     costs bounded memory and linear work.
//   - Write encodes into a reused buffer and makes one write call.
//   - tools/list traffic is captured for the raw schemas.
//
// Batches are decoded (each message is returned in turn); requests that came
// in a batch are answered one by one.
type stdioConn struct {
	c     *Conn
	r     io.ReadCloser
	w     io.WriteCloser
	limit int // frame limit in bytes; <= 0: none

	// Read side; go-sdk calls Read from one goroutine.
	buf        []byte
	start, end int               // unread bytes are buf[start:end]
	scanned    int               // buf[start:scanned] has no newline
	queue      []jsonrpc.Message // the rest of a batch
	scratch    []jsonrpc.Message
	discarding bool // inside a non-protocol line longer than noiseLogBytes
	noise      noiseLog
	readErr    error

	// Write side (Write): pmu guards the pending bytes and their count; wmu the writing
	// and the rest.
	pmu      sync.Mutex
	pbuf     []byte // encoded, not yet written
	pseq     uint64 // messages encoded onto pbuf so far
	wmu      sync.Mutex
	wbuf     []byte // the spare buffer
	wseq     uint64 // messages written (or failed) so far
	werr     error  // the first failed write's error
	werrFrom uint64 // the first message of that write

	direct wire.Calls // the direct calls of the Conn's wire.Client
	nudge  *nudger    // pings a quiet server holding an answer (nudge.go); nil: off

	closeOnce sync.Once
	closed    atomic.Bool
}

func newStdioConn(c *Conn, r io.ReadCloser, w io.WriteCloser, limit int) *stdioConn {
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	return &stdioConn{c: c, r: r, w: w, limit: limit, noise: noiseLog{c: c}}
}

// SessionID implements mcp.Connection.
func (s *stdioConn) SessionID() string { return "" }

// Close implements mcp.Connection: the Conn's shared teardown, which ends the
// process and then calls closeFiles.
func (s *stdioConn) Close() error { return s.c.Close() }

// closeFiles closes both pipes, unblocking a Read.
func (s *stdioConn) closeFiles() error {
	var err error
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.nudge.close()
		s.direct.Terminate(io.EOF)
		err = errors.Join(s.r.Close(), s.w.Close())
	})
	return err
}

// Read implements mcp.Connection. ctx is checked before reading; a blocked
// read ends when the server writes, exits, or Close closes the pipe (go-sdk
// passes a context that is never cancelled).
func (s *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(s.queue) > 0 {
		m := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		return m, nil
	}
	for {
		line, err := s.nextLine()
		if err != nil {
			return nil, err
		}
		if n, result, ok := wire.DirectResult(line); ok { // the common line: a direct call's answer
			s.nudge.answeredN(n)
			s.direct.DeliverResult(n, result)
			continue
		}
		msgs, derr := wire.DecodeLine(line, s.scratch[:0])
		if errors.Is(derr, wire.ErrTooDeep) {
			if r := wire.TooDeepAnswer(line); r != nil {
				msgs, derr = append(msgs[:0], r), nil
			}
		}
		if derr != nil {
			s.noise.line(line, false)
			continue
		}
		s.capture(msgs)
		msgs = s.answered(msgs)
		msgs = s.c.cap.notes.take(msgs)
		if msgs = s.direct.Deliver(msgs); len(msgs) == 0 {
			s.scratch = msgs
			continue
		}
		for _, m := range msgs {
			tolerateContent(m)
		}
		m := msgs[0]
		if len(msgs) > 1 {
			s.queue = append(s.queue[:0], msgs[1:]...)
		}
		clear(msgs)
		s.scratch = msgs[:0]
		return m, nil
	}
}

func (s *stdioConn) capture(msgs []jsonrpc.Message) {
	if !s.c.cap.waiting() {
		return
	}
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Response); ok {
			s.c.cap.response(r.ID, r.Result)
		}
	}
}

// nextLine returns the next non-blank line that may be a message (without its
// newline; valid until the next call). Non-protocol lines that cannot be a
// message (not starting with '{' or '[') are skipped here without being
// buffered whole.
func (s *stdioConn) nextLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(s.buf[s.scanned:s.end], '\n'); i >= 0 {
			nl := s.scanned + i
			line := s.buf[s.start:nl]
			s.start, s.scanned = nl+1, nl+1
			if s.discarding {
				s.discarding = false
				continue
			}
			first := wire.SkipSpace(line, 0)
			if first == len(line) {
				continue
			}
			if s.limit > 0 && len(line) > s.limit && (line[first] == '{' || line[first] == '[') {
				return nil, s.fail(fmt.Errorf("reading a frame longer than %d bytes: %w", s.limit, ErrFrameTooLarge))
			}
			return line, nil
		}
		s.scanned = s.end
		// No newline in buf[start:end]: a partial line.
		if s.discarding {
			s.start, s.scanned = s.end, s.end
		} else if first := wire.SkipSpace(s.buf[:s.end], s.start); first < s.end && s.buf[first] != '{' && s.buf[first] != '[' {
			// Cannot be a message: keep its head for the log, drop the rest
			// as it comes.
			if s.end-s.start > noiseLogBytes {
				s.noise.line(s.buf[s.start:s.end], true)
				s.discarding = true
				s.start, s.scanned = s.end, s.end
			}
		} else if s.limit > 0 && s.end-s.start > s.limit {
			return nil, s.fail(fmt.Errorf("reading a frame longer than %d bytes: %w", s.limit, ErrFrameTooLarge))
		}
		if s.readErr != nil {
			if err := s.eof(); err != nil {
				return nil, err
			}
			continue
		}
		s.fill()
	}
}

// fill reads more input into buf, compacting or growing it first.
func (s *stdioConn) fill() {
	if s.start == s.end {
		s.start, s.end, s.scanned = 0, 0, 0
		if len(s.buf) > keepReadBuf { // after a large frame
			s.buf = nil
		}
	}
	if s.buf == nil {
		s.buf = make([]byte, readChunk)
	}
	if len(s.buf)-s.end < minRead {
		if s.start > 0 {
			n := copy(s.buf, s.buf[s.start:s.end])
			s.scanned -= s.start
			s.start, s.end = 0, n
		}
		if len(s.buf)-s.end < len(s.buf)/2 { // less than half free: grow
			nb := make([]byte, 2*len(s.buf))
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if n > 0 {
		s.nudge.heard()
	}
	if err != nil {
		s.readErr = err
	}
}

// eof handles the end of the input: a last line without a newline is still a
// message (as for go-sdk's decoder); after it, the read error.
func (s *stdioConn) eof() error {
	if s.discarding || s.start == s.end {
		s.start, s.end, s.scanned = 0, 0, 0
		s.discarding = false
		return s.fail(s.readErr)
	}
	// Terminate the last line so that nextLine returns it; the error comes
	// on the following call.
	if s.end == len(s.buf) {
		s.buf = append(s.buf, '\n')
	} else {
		s.buf[s.end] = '\n'
	}
	s.end++
	return nil
}

// fail turns a read error into the session's end: Close's own closing of the
// pipe is a plain EOF, an ended process is explained.
func (s *stdioConn) fail(err error) error {
	switch {
	case s.closed.Load():
		err = io.EOF
	case errors.Is(err, ErrFrameTooLarge):
		s.c.frameOverrun.CompareAndSwap(nil, &err)
	default:
		err = s.c.explainEnd(fmt.Errorf("reading stdout: %w", err))
	}
	s.direct.Terminate(err)
	return err
}

// Write implements mcp.Connection. Messages written at once are coalesced: each is
// encoded onto the pending bytes, and whoever takes the write lock first writes all that
// is pending in one write call; a writer whose bytes went out with another's returns
// without a call of its own, with that write's outcome.
func (s *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Request); ok {
		switch r.Method {
		case methodToolsList:
			s.c.cap.expect(r.ID) // before writing: the response may be read first
		case wire.MethodDiscover:
			s.c.client.Envelope().Observe(r.Params)
		case methodToolsCall:
			msg = s.direct.StandIn(ctx, r, msg)
		}
	}
	msg = s.c.cap.taps.Tap(ctx, msg) // a Tap on ctx follows the request
	s.track(msg)
	s.pmu.Lock()
	n := len(s.pbuf)
	buf, err := wire.AppendMessage(s.pbuf, msg)
	if err != nil {
		s.pbuf = buf[:n]
		s.pmu.Unlock()
		s.untrack(msg)
		return err
	}
	s.pbuf = buf
	s.pseq++
	seq := s.pseq
	s.pmu.Unlock()

	s.wmu.Lock()
	if s.wseq < seq { // not written yet: write what is pending, ours with it
		s.pmu.Lock()
		out, upto := s.pbuf, s.pseq
		s.pbuf = s.wbuf[:0]
		s.pmu.Unlock()
		var werr error
		if s.closed.Load() {
			werr = os.ErrClosed
		} else {
			_, werr = s.w.Write(out)
		}
		if werr != nil && s.werr == nil {
			s.werr, s.werrFrom = werr, s.wseq+1
		}
		s.wseq = upto
		s.wbuf = nil
		if cap(out) <= keepWriteBuf {
			s.wbuf = out[:0]
		}
	}
	werr := s.werr
	if werr != nil && seq < s.werrFrom {
		werr = nil // written before the first failed write
	}
	s.wmu.Unlock()
	if werr != nil {
		s.untrack(msg)
		if s.closed.Load() {
			return fmt.Errorf("writing to stdin: %w", werr)
		}
		return s.c.explainEnd(fmt.Errorf("writing to stdin: %w", werr))
	}
	return nil
}

// noiseLog counts a server's non-protocol stdout lines and logs them at Warn,
// escaped and cut to noiseLogBytes: the first noiseBurst, then one per
// noiseEvery with the number left out meanwhile.
type noiseLog struct {
	c          *Conn
	logged     int
	suppressed int
	last       time.Time
}

func (n *noiseLog) line(line []byte, cut bool) {
	n.c.noise.Add(1)
	now := time.Now()
	if n.logged >= noiseBurst && now.Sub(n.last) < noiseEvery {
		n.suppressed++
		return
	}
	n.logged++
	n.last = now
	line = bytes.TrimSpace(line)
	if len(line) > noiseLogBytes {
		line, cut = line[:noiseLogBytes], true
		for len(line) > 0 && !utf8.Valid(line) && !utf8.RuneStart(line[len(line)-1]) {
			line = line[:len(line)-1]
		}
	}
	// Secrets (argument and env values) redacted; control characters escaped: the log may
	// be a terminal.
	q := strconv.Quote(redact.String(string(line), n.c.secrets))
	attrs := []slog.Attr{slog.String("server", n.c.id), slog.String("line", q[1:len(q)-1])}
	if cut {
		attrs = append(attrs, slog.Bool("truncated", true))
	}
	if n.suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", n.suppressed))
		n.suppressed = 0
	}
	n.c.logger.LogAttrs(context.Background(), slog.LevelWarn, "server wrote a non-JSON-RPC line on stdout; skipped", attrs...)
}
