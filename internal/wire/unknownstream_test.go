package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	unknownResult = `{"content":[{"type":"text","text":"a"},{"type":"video","data":"AA"}]}`
	fixedResult   = `{"content":[{"type":"text","text":"a"},{"type":"text","text":"","_meta":{"` + UnknownContentKey + `":"{\"type\":\"video\",\"data\":\"AA\"}"}}]}`
)

// TestReplaceUnknownContentMessage: a response's result is rewritten (every copy of the
// member), anything else comes back as itself; the output decodes with go-sdk.
func TestReplaceUnknownContentMessage(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{ // want "": unchanged
		{"response", `{"jsonrpc":"2.0","id":3,"result":` + unknownResult + `}`, `{"jsonrpc":"2.0","id":3,"result":` + fixedResult + `}`},
		{"spaced, result first", ` { "result" : ` + unknownResult + ` , "id":"x","jsonrpc":"2.0"} `, `{"result":` + fixedResult + `,"id":"x","jsonrpc":"2.0"}`},
		{"result twice", `{"jsonrpc":"2.0","id":1,"result":{},"result":` + unknownResult + `}`, `{"jsonrpc":"2.0","id":1,"result":{},"result":` + fixedResult + `}`},
		{"known content", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}`, ""},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":` + unknownResult + `}}`, ""},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":` + unknownResult + `}`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"result":` + unknownResult + `}]`, ""},
		{"malformed", `{"jsonrpc":"2.0","id":1,"result":` + unknownResult, ""},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"result":` + unknownResult + `}x`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReplaceUnknownContentMessage([]byte(tt.in))
			if tt.want == "" {
				if ok || string(got) != tt.in {
					t.Fatalf("got %s, %v; want it unchanged", got, ok)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Fatalf("got\n %s, %v\nwant\n %s", got, ok, tt.want)
			}
			msg, err := jsonrpc.DecodeMessage(got)
			if err != nil {
				t.Fatal(err)
			}
			var res mcp.CallToolResult
			if err := res.UnmarshalJSON(msg.(*jsonrpc.Response).Result); err != nil {
				t.Fatalf("go-sdk cannot decode the rewritten result: %v", err)
			}
		})
	}
}

// TestReplaceUnknownContentSSE: message events with unknown content get their data
// rewritten, keeping their other fields; every other byte passes as sent, whatever the
// reads' sizes; an event over the limit passes untouched.
func TestReplaceUnknownContentSSE(t *testing.T) {
	resp := `{"jsonrpc":"2.0","id":1,"result":` + unknownResult + `}`
	fixed := `{"jsonrpc":"2.0","id":1,"result":` + fixedResult + `}`
	plain := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"b"}]}}`
	for _, tt := range []struct {
		name, in, want string
		limit          int
	}{
		{"one event", "id: 7\nevent: message\ndata: " + resp + "\n\n", "id: 7\nevent: message\ndata: " + fixed + "\n\n", 1 << 20},
		{"crlf, comments, retry, priming event", ": hi\r\nid: 0\r\nretry: 5\r\n\r\nid: 1\r\ndata:" + resp + "\r\n: c\r\n\r\n",
			": hi\r\nid: 0\r\nretry: 5\r\n\r\nid: 1\r\n: c\r\ndata: " + fixed + "\n\r\n", 1 << 20},
		{"data on several lines", "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\":1,\"result\":\ndata: " + unknownResult + "}\n\n",
			"data: " + fixed + "\n\n", 1 << 20}, // the members' spacing goes
		{"beside plain events", "data: " + plain + "\n\ndata: " + resp + "\n\ndata: " + plain + "\n\n",
			"data: " + plain + "\n\ndata: " + fixed + "\n\ndata: " + plain + "\n\n", 1 << 20},
		{"other event name", "event: other\ndata: " + resp + "\n\n", "", 1 << 20},
		{"malformed line", "data: " + resp + "\nnocolon\n\n", "", 1 << 20},
		{"over the limit", "data: " + resp + "\n\ndata: " + resp + "\n\n", "", 80},
		{"rewrite over the limit", "data: " + resp + "\n\n", "", len(resp) + 10},
		{"at EOF without a blank line", "id: 3\ndata: " + resp, "id: 3\ndata: " + fixed + "\n", 1 << 20},
		{"at EOF, id last", "data: " + resp + "\nid: 3", "id: 3\ndata: " + fixed + "\n", 1 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			for _, r := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader,
			} {
				got, err := io.ReadAll(ReplaceUnknownContentSSE(r(strings.NewReader(tt.in)), tt.limit))
				if err != nil || string(got) != want {
					t.Fatalf("got\n %q, %v\nwant\n %q", got, err, want)
				}
			}
		})
	}
}

// TestReplaceUnknownContentSSEError: on a read error the bytes of a pending event pass as
// they were, then the error.
func TestReplaceUnknownContentSSEError(t *testing.T) {
	in := "data: " + `{"jsonrpc":"2.0","id":1,"result":` + unknownResult + `}`
	r := io.MultiReader(strings.NewReader(in), iotest.ErrReader(io.ErrUnexpectedEOF))
	got, err := io.ReadAll(ReplaceUnknownContentSSE(r, 1<<20))
	if err != io.ErrUnexpectedEOF || string(got) != in {
		t.Fatalf("got %q, %v; want the bytes as sent, then the error", got, err)
	}
}

// TestReplaceUnknownContentSSEIdle: a stream read through a bufio.Reader, as go-sdk reads
// it, costs no buffer of the rewriter's own (issue 37: 4 KiB per idle subscriptions/listen
// stream, one per server); a reader of small reads still gets every byte.
func TestReplaceUnknownContentSSEIdle(t *testing.T) {
	const streams = 100
	in := "event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n\n"
	readers := make([]*bufio.Reader, streams)
	for i := range readers {
		readers[i] = bufio.NewReader(ReplaceUnknownContentSSE(strings.NewReader(in), 1<<20))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, r := range readers {
		if line, err := r.ReadString('\n'); err != nil || line != "event: message\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > streams*1024 {
		t.Errorf("reading one event of %d streams allocated %d bytes; want under 1 KiB a stream (no buffer of its own)", streams, got)
	}
	got, err := io.ReadAll(iotest.OneByteReader(ReplaceUnknownContentSSE(strings.NewReader(in), 1<<20)))
	if err != nil || string(got) != in {
		t.Errorf("one byte at a time: %q, %v; want %q", got, err, in)
	}
}

// sseEvents parses an event stream as go-sdk does (SSEParser), as "name|data" strings.
func sseEvents(b []byte, limit int) []string {
	var evs []string
	p := &SSEParser{Limit: limit, OnEvent: func(name string, data []byte) { evs = append(evs, name+"|"+string(data)) }}
	p.Write(b)
	p.Finish()
	return evs
}

// FuzzReplaceUnknownContentSSE: whatever the stream and however it is read, the rewritten
// stream holds the events the server sent, each message's data as
// ReplaceUnknownContentMessage makes it; a stream with nothing to rewrite comes out as it
// went in; and no event holds more than the limit.
func FuzzReplaceUnknownContentSSE(f *testing.F) {
	resp := `{"jsonrpc":"2.0","id":1,"result":` + unknownResult + `}`
	f.Add([]byte("id: 1\ndata: "+resp+"\n\n"), byte(3), 1<<12)
	f.Add([]byte(": c\r\nevent: message\r\ndata: "+resp+"\r\n\r\ndata: x\n\n"), byte(1), 1<<12)
	f.Add([]byte("data: {\"result\":\ndata: "+unknownResult+"}\n\nevent: other\ndata: "+resp+"\n\n"), byte(7), 300)
	f.Add([]byte("data: "+resp), byte(2), 90)
	f.Add([]byte("no colon\n\ndata: "+resp+"\n\n"), byte(5), 1<<12)
	f.Fuzz(func(t *testing.T, in []byte, split byte, limit int) {
		limit = 1 + abs(limit)%(1<<14)
		out, err := io.ReadAll(ReplaceUnknownContentSSE(bytes.NewReader(in), limit))
		if err != nil {
			t.Fatal(err)
		}
		parts, err := io.ReadAll(ReplaceUnknownContentSSE(&chunked{b: in, n: int(split%13) + 1}, limit))
		if err != nil || !bytes.Equal(out, parts) {
			t.Fatalf("split-dependent output:\nwhole %q\nparts %q (%v)", out, parts, err)
		}
		if !bytes.Contains(in, contentKey) && !bytes.Equal(out, in) {
			t.Fatalf("nothing to rewrite, yet\n in %q\nout %q", in, out)
		}
		// The events as go-sdk reads them (without its limit: the rewrite keeps to ours):
		// each as sent or rewritten; rewritten for sure when the limit is no constraint.
		got, sent := sseEvents(out, len(out)+1), sseEvents(in, len(in)+1)
		if len(got) != len(sent) {
			t.Fatalf("events\n %q\nwant\n %q", got, sent)
		}
		roomy := limit > 4*len(in)+64
		for i, ev := range sent {
			name, data, _ := strings.Cut(ev, "|")
			fixed, ok := ReplaceUnknownContentMessage([]byte(data))
			ok = ok && (name == "" || name == "message")
			switch {
			case ok && got[i] == name+"|"+string(fixed):
			case got[i] == ev && (!ok || !roomy):
			default:
				t.Fatalf("event %d is %q\nsent %q", i, got[i], ev)
			}
		}
	})
}

// chunked reads b n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// BenchmarkReplaceUnknownContentSSE: the rewriting reader over a stream of 100 tools/call
// responses of 1 KiB of text each, none with unknown content (the common case: what the
// rewrite costs every Streamable HTTP session on go-sdk's path) and each with one.
func BenchmarkReplaceUnknownContentSSE(b *testing.B) {
	for _, tc := range []struct {
		name  string
		block string
	}{
		{"plain", `{"type":"text","text":"x"}`},
		{"unknown", `{"type":"video","data":"AAAA"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var stream bytes.Buffer
			for i := range 100 {
				fmt.Fprintf(&stream, "id: %d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q},%s]}}\n\n",
					i, i, strings.Repeat("t", 1024), tc.block)
			}
			in := stream.Bytes()
			b.SetBytes(int64(len(in)))
			buf := make([]byte, 4096)
			for b.Loop() {
				r := ReplaceUnknownContentSSE(bytes.NewReader(in), 1<<24)
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}
