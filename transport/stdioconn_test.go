package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pipeConn returns a stdioConn reading what the returned writer gets, and the
// log it writes to.
func pipeConn(t *testing.T, limit int) (*stdioConn, *io.PipeWriter, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	c := &Conn{id: "p", logger: slog.New(slog.NewTextHandler(&logs, nil))}
	r, w := io.Pipe()
	s := newStdioConn(c, r, nopWriteCloser{io.Discard}, limit)
	t.Cleanup(func() { _ = s.closeFiles() })
	return s, w, &logs
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestStdioConnNoiseFlood: a flood of non-protocol output (many lines, and one line far
// longer than the frame limit) is skipped with bounded buffering, and the message after it
// is read.
func TestStdioConnNoiseFlood(t *testing.T) {
	const limit = 64 << 10
	s, w, logs := pipeConn(t, limit)
	const lines = 20000
	go func() {
		line := []byte(strings.Repeat("noise ", 50) + "\n")
		for range lines {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		chunk := bytes.Repeat([]byte("y"), 32<<10)
		for range 256 { // 8 MiB without a newline
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		_, _ = w.Write([]byte("\n" + `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}` + "\n"))
		_ = w.Close()
	}()
	msg, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := msg.(*jsonrpc.Response); !ok || string(r.Result) != `{"ok":true}` {
		t.Fatalf("read %#v", msg)
	}
	if n := s.c.NonProtocolLines(); n != lines+1 {
		t.Errorf("NonProtocolLines() = %d, want %d", n, lines+1)
	}
	if len(s.buf) > 2*readChunk {
		t.Errorf("read buffer grew to %d bytes for non-protocol lines", len(s.buf))
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != noiseBurst {
		t.Errorf("%d warnings logged, want %d", n, noiseBurst)
	}
	if _, err := s.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read at the end: %v, want EOF", err)
	}
}

// TestStdioConnFraming: messages split across reads, CRLF, blank lines, a batch, and a
// last message without a newline; a message longer than the limit ends the session.
func TestStdioConnFraming(t *testing.T) {
	s, w, _ := pipeConn(t, 4096)
	big := `{"jsonrpc":"2.0","id":9,"result":"` + strings.Repeat("z", 5000) + `"}` + "\n"
	go func() {
		for _, part := range []string{
			`{"jsonrpc":"2.0",`, `"id":1,"result":1}` + "\r\n\r\n   \n",
			`[{"jsonrpc":"2.0","id":2,"result":2},{"jsonrpc":"2.0","method":"n","params":{}}]` + "\n",
			`{"jsonrpc":"2.0","id":3,"result":3}` + "\n" + `{"jsonrpc":"2.0","id":4,"result":4}`,
		} {
			if _, err := w.Write([]byte(part)); err != nil {
				return
			}
		}
		_ = w.Close()
	}()
	var got []string
	for {
		m, err := s.Read(context.Background())
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Read: %v", err)
			}
			break
		}
		got = append(got, describeMsg(m))
	}
	want := []string{"r1:1", "r2:2", "q:n", "r3:3", "r4:4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read %v, want %v", got, want)
	}

	s2, w2, _ := pipeConn(t, 4096)
	go func() { _, _ = w2.Write([]byte(big)) }()
	if _, err := s2.Read(context.Background()); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("Read of a %d-byte frame with a 4096 limit: %v, want ErrFrameTooLarge", len(big), err)
	}
}

func describeMsg(m jsonrpc.Message) string {
	switch m := m.(type) {
	case *jsonrpc.Response:
		id, _ := json.Marshal(m.ID.Raw())
		return "r" + string(id) + ":" + string(m.Result)
	case *jsonrpc.Request:
		return "q:" + m.Method
	}
	return "?"
}

// BenchmarkStdioConnRead reads small responses through stdioConn and through go-sdk's
// decoding of the same lines (jsonrpc.DecodeMessage after its batch probe).
func BenchmarkStdioConnRead(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"42"}],"isError":false}}` + "\n")
	b.Run("stdioConn", func(b *testing.B) {
		c := &Conn{id: "b", logger: slog.New(slog.DiscardHandler)}
		r := &repeatReader{line: line}
		s := newStdioConn(c, io.NopCloser(r), nopWriteCloser{io.Discard}, 0)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Read(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sdk-decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var batch []json.RawMessage
			_ = json.Unmarshal(line, &batch) // stands in for go-sdk's batch probe (its own decoder)
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// repeatReader returns line over and over.
type repeatReader struct {
	line []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// TestStdioConnNoiseRedacted: a non-protocol line is logged with the server's secrets
// (argument and env values) masked and control characters escaped.
func TestStdioConnNoiseRedacted(t *testing.T) {
	s, w, logs := pipeConn(t, 0)
	s.c.secrets = []string{"tok-do-not-print"}
	go func() {
		_, _ = w.Write([]byte("config: token=tok-do-not-print \x1b[2J\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	}()
	if _, err := s.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Contains(out, "tok-do-not-print") || strings.Contains(out, "\x1b") || !strings.Contains(out, "config: token=") {
		t.Errorf("log: %q", out)
	}
}

// gateWriter holds its first Write until open is closed, and records every Write.
type gateWriter struct {
	entered, open chan struct{}
	once          sync.Once
	mu            sync.Mutex
	calls         int
	data          bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered); <-g.open })
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	return g.data.Write(p)
}

func (g *gateWriter) Close() error { return nil }

// TestStdioConnWritesCoalesced: messages written while another write call is under way go
// out together in one write call after it, whole and in order, and each Write returns
// once its message is written.
func TestStdioConnWritesCoalesced(t *testing.T) {
	gw := &gateWriter{entered: make(chan struct{}), open: make(chan struct{})}
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	s := newStdioConn(&Conn{id: "p", logger: slog.New(slog.DiscardHandler)}, r, gw, 0)
	t.Cleanup(func() { _ = s.closeFiles() })
	const writers = 6
	errs := make(chan error, writers)
	write := func(n int) {
		id, _ := jsonrpc.MakeID(float64(n))
		errs <- s.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "m" + strconv.Itoa(n)})
	}
	go write(1)
	<-gw.entered
	for n := 2; n <= writers; n++ {
		go write(n)
		for deadline := time.Now().Add(10 * time.Second); ; { // encoded in turn: the order is known
			s.pmu.Lock()
			queued := s.pseq
			s.pmu.Unlock()
			if queued == uint64(n) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("writer %d did not queue its message", n)
			}
			runtime.Gosched()
		}
	}
	select {
	case err := <-errs:
		t.Fatalf("a Write returned (%v) before its message was written", err)
	default:
	}
	close(gw.open)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	if gw.calls != 2 {
		t.Errorf("%d write calls for %d messages, the last %d written at once; want 2", gw.calls, writers, writers-1)
	}
	lines := strings.Split(strings.TrimSuffix(gw.data.String(), "\n"), "\n")
	for i, line := range lines {
		if want := `"method":"m` + strconv.Itoa(i+1) + `"`; !strings.Contains(line, want) {
			t.Errorf("line %d = %s, want the message with %s", i+1, line, want)
		}
	}
	if len(lines) != writers {
		t.Errorf("%d lines written, want %d", len(lines), writers)
	}
}
