package wire

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// parseSSE parses input in chunks of the given sizes (cycled) and returns
// the dispatched events as "name|data" strings.
func parseSSE(input []byte, chunks []int, limit int) []string {
	var events []string
	p := &SSEParser{Limit: limit, OnEvent: func(name string, data []byte) {
		events = append(events, name+"|"+string(data))
	}}
	for i := 0; len(input) > 0; i++ {
		n := len(input)
		if len(chunks) > 0 {
			n = max(1, chunks[i%len(chunks)])
		}
		n = min(n, len(input))
		p.Write(input[:n])
		input = input[n:]
	}
	p.Finish()
	return events
}

func TestSSEParser(t *testing.T) {
	tests := []struct {
		name  string
		input string
		limit int
		want  []string
	}{
		{"one event", "event: message\ndata: {\"a\":1}\n\n", 1 << 20, []string{"message|{\"a\":1}"}},
		{"crlf and multi data", "data: a\r\ndata:  b \r\nid: 3\r\n\r\n", 1 << 20, []string{"|a\nb"}},
		{"comment, no data, eof event", ": hi\nid: 1\n\ndata: x", 1 << 20, []string{"|x"}},
		{"malformed line stops", "data: a\n\nbogus\ndata: b\n\n", 1 << 20, []string{"|a"}},
		{"oversized event stops", "data: 1\n\ndata: " + strings.Repeat("z", 50) + "\n\ndata: 2\n\n", 30, []string{"|1"}},
		{"name resets", "event: other\ndata: a\n\ndata: b\n\n", 1 << 20, []string{"other|a", "|b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunks := range [][]int{nil, {1}, {2, 3}, {7}} {
				got := parseSSE([]byte(tt.input), chunks, tt.limit)
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("chunks %v: events %q, want %q", chunks, got, tt.want)
				}
			}
		})
	}
}

// FuzzSSEParser checks that parsing does not depend on how the body is split
// into reads, and never panics.
func FuzzSSEParser(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), byte(3), 64)
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\nid: 1\nretry: 5\n\ndata:x"), byte(1), 8)
	f.Add([]byte("no colon\n\n"), byte(2), 1024)
	f.Fuzz(func(t *testing.T, input []byte, split byte, limit int) {
		limit = 1 + abs(limit)%4096
		whole := parseSSE(input, nil, limit)
		parts := parseSSE(input, []int{int(split%17) + 1, int(split%5) + 1}, limit)
		if fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Fatalf("split-dependent result:\nwhole %q\nparts %q", whole, parts)
		}
		for _, ev := range whole {
			if len(ev) > limit+1 { // name|data; data is within the event budget
				_, data, _ := strings.Cut(ev, "|")
				if len(data) > limit {
					t.Fatalf("event data of %d bytes exceeds limit %d", len(data), limit)
				}
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}

// The id and retry fields of the last event that had them are kept for resuming the stream;
// a retry that is no number is ignored, a huge one is capped.
func TestSSEParserResumeFields(t *testing.T) {
	for _, tt := range []struct {
		in    string
		id    string
		retry time.Duration
	}{
		{"id: e-1\nretry: 500\ndata:\n\n", "e-1", 500 * time.Millisecond},
		{"id: e-1\n\nid: e-2\n\n", "e-2", 0},
		{"id: e-1\n\ndata: x\n\n", "e-1", 0},
		{"retry: soon\nid: a\n\n", "a", 0},
		{"retry: 99999999999\n\n", "", maxRetryField},
		{"id: pending", "pending", 0}, // dispatched at Finish
	} {
		p := &SSEParser{Limit: 1 << 10}
		p.Write([]byte(tt.in))
		p.Finish()
		if p.LastID != tt.id || p.Retry != tt.retry {
			t.Errorf("%q: LastID %q Retry %v, want %q %v", tt.in, p.LastID, p.Retry, tt.id, tt.retry)
		}
	}
}
