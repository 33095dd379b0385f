package transport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
)

// chunkReader returns data at most chunk bytes per Read, then io.EOF.
type chunkReader struct {
	data  []byte
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.chunk, len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func (r *chunkReader) Close() error { return nil }

// TestStdioConnDirectAnswersAtEveryChunking (issue 36): every answer line read from the
// server reaches its waiting direct call, however the stream is cut into reads: at every
// byte (chunk 1), around the read buffer's compaction and growth (readChunk, minRead),
// with a frame larger than the first buffer, between go-sdk's messages, non-protocol
// lines, a direct call's error answer alone and inside a batch. go-sdk's messages come
// out of Read in order, none of the direct answers does.
func TestStdioConnDirectAnswersAtEveryChunking(t *testing.T) {
	const calls = 12
	text := func(i int) string {
		switch i {
		case 3:
			return strings.Repeat("b", 3*readChunk) // grows the buffer
		case 7:
			return strings.Repeat("c", readChunk-minRead-40) // ends near the buffer's end
		}
		return "t" + strconv.Itoa(i)
	}
	answer := func(id int64, i int) string {
		switch i {
		case 5: // a JSON-RPC error: decoded, then Deliver
			return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"error":{"code":-32000,"message":"e5"}}`
		case 9: // members in another order, spaces
			return `{ "result" : {"content":[{"type":"text","text":"` + text(i) + `"}]} , "id" : ` + strconv.FormatInt(id, 10) + ` , "jsonrpc" : "2.0" }`
		}
		return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"result":{"content":[{"type":"text","text":"` + text(i) + `"}]}}`
	}
	for _, chunk := range []int{1, 2, 7, minRead - 1, minRead + 1, readChunk - 1, readChunk, readChunk + 1, 1 << 20} {
		t.Run(strconv.Itoa(chunk), func(t *testing.T) {
			// The calls are made first (their IDs are the table's), then the server's
			// output with every answer is read in chunks.
			s := newStdioConn(&Conn{id: "c", logger: slog.New(slog.DiscardHandler)}, nil, nopWriteCloser{io.Discard}, 0)
			ids := make(chan int64, calls)
			client := wire.NewClient(nil)
			client.Attach(&s.direct, func(_ context.Context, m jsonrpc.Message) error {
				ids <- m.(*jsonrpc.Request).ID.Raw().(int64)
				return nil
			})
			type outcome struct {
				i    int
				text string
				err  error
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan outcome, calls)
			byID := map[int64]int{}
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() {
					res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "t"}, nil)
					o := outcome{i: i, err: err}
					if err == nil && len(res.Content) == 1 {
						o.text = res.Content[0].(*mcp.TextContent).Text
					}
					done <- o
				})
				byID[<-ids] = i // one at a time: call i has the ID just written
			}
			var out strings.Builder
			out.WriteString("server banner\n")
			k := 0
			for id, i := range byID {
				switch k % 4 {
				case 0:
					out.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(100+k) + `,"result":{}}` + "\n")
				case 1:
					out.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\r\n\n")
				case 2:
					out.WriteString("   log line " + strconv.Itoa(k) + "\n")
				}
				if k == 6 { // a batch: a go-sdk response with the direct answer
					out.WriteString(`[{"jsonrpc":"2.0","id":` + strconv.Itoa(200+k) + `,"result":{}},` + answer(id, i) + "]\n")
				} else {
					out.WriteString(answer(id, i) + "\n")
				}
				k++
			}
			s.r = &chunkReader{data: []byte(out.String()), chunk: chunk}
			var got []string
			for {
				m, err := s.Read(ctx)
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("Read: %v", err)
					}
					break
				}
				got = append(got, describeMsg(m))
			}
			for _, d := range got {
				if strings.HasPrefix(d, "r-") {
					t.Errorf("a direct answer reached go-sdk: %.80s", d)
				}
			}
			if len(got) != 7 { // 3 responses and 3 notifications between the lines, 1 in the batch
				t.Errorf("go-sdk read %d messages, want 7: %v", len(got), got)
			}
			wg.Wait()
			close(done)
			n := 0
			for o := range done {
				n++
				switch {
				case o.i == 5:
					if o.err == nil || !strings.Contains(o.err.Error(), "e5") {
						t.Errorf("call %d: err %v, want the server's error e5", o.i, o.err)
					}
				case o.err != nil:
					t.Errorf("call %d: %v", o.i, o.err)
				case o.text != text(o.i):
					t.Errorf("call %d: text %.20q (%d bytes), want %.20q (%d bytes)", o.i, o.text, len(o.text), text(o.i), len(text(o.i)))
				}
			}
			if n != calls {
				t.Errorf("%d calls returned, want %d", n, calls)
			}
		})
	}
}
