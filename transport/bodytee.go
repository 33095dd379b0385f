package transport

import (
	"errors"
	"io"
	"sync"
)

// bodySink consumes a response body as it is read.
type bodySink interface {
	Write(p []byte)
	Finish() // the body reached EOF
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
		t.sink.Write(p[:n])
	}
	if errors.Is(err, io.EOF) {
		t.once.Do(t.sink.Finish)
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

func (s *jsonSink) Write(p []byte) {
	if s.over {
		return
	}
	if len(s.buf)+len(p) > s.limit {
		s.over, s.buf = true, nil
		return
	}
	s.buf = append(s.buf, p...)
}

func (s *jsonSink) Finish() {
	if !s.over {
		s.onBody(s.buf)
	}
	s.buf = nil
}
