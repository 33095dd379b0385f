package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/internal/wire"
)

func TestParseEndpoint(t *testing.T) {
	ep, err := parseEndpoint("https://bob:pw@Example.com:8443/a%2Fb/mcp?token=s%20x&k=v#frag")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ep.redacted.String(), "https://Example.com:8443/a%2Fb/mcp?token=***&k=***"; got != want {
		t.Errorf("redacted = %s, want %s", got, want)
	}
	if got, want := ep.real.String(), "https://Example.com:8443/a%2Fb/mcp?token=s%20x&k=v"; got != want {
		t.Errorf("real = %s, want %s", got, want)
	}
	if pw, _ := ep.user.Password(); ep.user.Username() != "bob" || pw != "pw" {
		t.Errorf("user = %v", ep.user)
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"short", 10, []string{"ab", "cd"}, "abcd"},
		{"exact", 4, []string{"ab", "cd"}, "abcd"},
		{"overflow", 4, []string{"abc", "def"}, "cdef"},
		{"one big write", 3, []string{"abcdefg"}, "efg"},
		{"cut rune dropped", 4, []string{"xé", "abc"}, "abc"}, // é is 2 bytes; its 2nd byte is cut off
		{"invalid byte replaced", 10, []string{"a\xffb"}, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &tailBuffer{max: tt.max}
			for _, w := range tt.writes {
				tb.Write([]byte(w))
			}
			got := tb.String()
			if got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("String() is not valid UTF-8")
			}
		})
	}
}

func TestLineLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
				return slog.Attr{}
			}
			return a
		}}))
	ll := lineLogger{logger: logger, id: "s"}
	long := strings.Repeat("y", maxLogLine+10)
	for _, chunk := range []string{"one\r\ntw", "o\n", long[:100], long[100:] + "\nthree", ""} {
		ll.write([]byte(chunk))
	}
	ll.flush()
	want := fmt.Sprintf("server=s line=one\nserver=s line=two\nserver=s line=%s truncated=true\nserver=s line=three\n",
		strings.Repeat("y", maxLogLine))
	if got := buf.String(); got != want {
		t.Errorf("logged:\n%s\nwant:\n%s", got, want)
	}
}

func TestLineLoggerDisabled(t *testing.T) {
	var buf bytes.Buffer
	ll := lineLogger{logger: slog.New(slog.NewTextHandler(&buf, nil)), id: "s"} // Info level
	ll.write([]byte("a\nb"))
	ll.flush()
	if buf.Len() != 0 {
		t.Errorf("logged at Info level: %q", buf.String())
	}
}

// FuzzCaptureResponses checks that the capture never panics on untrusted
// payloads and that every tool it returns is a valid JSON value that was
// present in the input.
func FuzzCaptureResponses(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object","x":9007199254740993}}]}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"result":{"tools":[]}},{"jsonrpc":"2.0","id":"1","result":null}]`))
	f.Add([]byte(`{"id":1,"error":{"code":-1,"message":"x"}}`))
	f.Add([]byte(`{"id":1.0,"result":{"tools":[1,"x",null]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c capture
		c.expect(mustID(float64(1)))
		c.observeResponses(data)
		for _, tool := range c.take() {
			if !json.Valid(tool) {
				t.Fatalf("captured invalid JSON %q", tool)
			}
			if !bytes.Contains(data, tool) {
				t.Fatalf("captured %q, not in the input", tool)
			}
		}
		var j jsonSink
		j.limit = 1 << 20
		j.onBody = c.observeResponses
		j.Write(data)
		j.Finish()
		_ = isInitialize(data)
		_ = c.observeRequests(data)
	})
}

func TestCaptureIgnoresUnexpectedIDs(t *testing.T) {
	var c capture
	c.expect(mustID(float64(2)))
	c.observeResponses([]byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}`))
	if got := c.take(); len(got) != 0 {
		t.Errorf("captured %s for an unexpected ID", got)
	}
	c.observeResponses([]byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"} , {"name" : "c"}]}}`))
	got := c.take()
	if len(got) != 2 || string(got[0]) != `{"name":"b"}` || string(got[1]) != `{"name" : "c"}` {
		t.Errorf("captured %s", got)
	}
	c.observeResponses([]byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}`))
	if got := c.take(); len(got) != 0 {
		t.Errorf("captured a second response to one request: %s", got)
	}
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "=C:=x", "C=3"}, map[string]string{"B": "20", "D": "4"})
	want := []string{"A=1", "=C:=x", "C=3", "B=20", "D=4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mergeEnv = %q, want %q", got, want)
	}
}

// BenchmarkSSECapture measures the tee parser on a stream of tools/list-sized
// events while a response is expected.
func BenchmarkSSECapture(b *testing.B) {
	var ev bytes.Buffer
	tools := strings.Repeat(`{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}},`, 200)
	fmt.Fprintf(&ev, "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[%s]}}\n\n", strings.TrimSuffix(tools, ","))
	body := ev.Bytes()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var c capture
		c.expect(mustID(float64(7)))
		p := &wire.SSEParser{Limit: 1 << 24, OnEvent: func(_ string, data []byte) { c.observeResponses(data) }}
		for chunk := body; len(chunk) > 0; {
			n := min(4096, len(chunk))
			p.Write(chunk[:n])
			chunk = chunk[n:]
		}
		p.Finish()
		if len(c.take()) != 200 {
			b.Fatal("capture failed")
		}
	}
}
