package transport

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestNudgeSchedule runs a nudger on fake time and checks when it pings: not before the
// server answered a first request, not while the server sends bytes, once a request has waited NudgeAfter with the server quiet, then once
// per NudgeAfter, at most maxUnansweredNudges unanswered, again after an answer, and never
// once nothing is outstanding.
func TestNudgeSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const after = time.Second
		start := time.Now()
		var (
			mu    sync.Mutex
			pings []time.Duration // when each ping was written, from start
		)
		n := newNudger(after, func(line []byte) error {
			if !strings.Contains(string(line), `"id":"`+nudgePrefix) || !strings.Contains(string(line), `"method":"ping"`) {
				t.Errorf("nudge line %s", line)
			}
			mu.Lock()
			pings = append(pings, time.Since(start))
			mu.Unlock()
			return nil
		})
		defer n.close()
		got := func() []time.Duration {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return append([]time.Duration(nil), pings...)
		}
		first, _ := jsonrpc.MakeID(float64(1)) // initialize: no ping before its answer
		n.sent(first)
		time.Sleep(5 * after)
		if p := got(); len(p) != 0 {
			t.Fatalf("pings before the server answered anything: %v", p)
		}
		n.answered(first)
		start = time.Now()
		id, _ := jsonrpc.MakeID(float64(7))
		n.sent(id)
		for range 10 { // the server keeps sending: 5 s without a ping
			time.Sleep(after / 2)
			n.heard()
		}
		if p := got(); len(p) != 0 {
			t.Fatalf("pings while the server sent bytes: %v", p)
		}
		// Quiet from 5 s: pings at 6, 7, 8, 9 s, then none (4 unanswered) until one is
		// answered at 11.5 s; the next look finds the answer's bytes too recent.
		time.Sleep(6500 * time.Millisecond)
		want := []time.Duration{6 * time.Second, 7 * time.Second, 8 * time.Second, 9 * time.Second}
		if p := got(); !slices.Equal(p, want) {
			t.Fatalf("pings = %v, want %v", p, want)
		}
		pingID, _ := jsonrpc.MakeID(nudgePrefix + "1")
		if !n.own(&jsonrpc.Response{ID: pingID}) {
			t.Fatal("own(answer to our ping) = false")
		}
		n.heard()
		time.Sleep(2500 * time.Millisecond) // to 14 s: a ping at 12.5 s (quiet since 11.5 s)
		want = append(want, 12500*time.Millisecond)
		if p := got(); !slices.Equal(p, want) {
			t.Fatalf("pings = %v, want %v", p, want)
		}
		n.answered(id) // nothing outstanding
		time.Sleep(10 * after)
		if p := got(); !slices.Equal(p, want) {
			t.Fatalf("pings with nothing outstanding = %v, want %v", p, want)
		}
	})
}

// TestNudgeAnswerNotDelivered: the answer to one of our pings (result or error, alone or
// in a batch) never comes out of Read; the message after it does.
func TestNudgeAnswerNotDelivered(t *testing.T) {
	tests := []struct{ name, lines string }{
		{"result", `{"jsonrpc":"2.0","id":"mcpbridge-nudge-1","result":{}}`},
		{"error", `{"jsonrpc":"2.0","id":"mcpbridge-nudge-2","error":{"code":-32601,"message":"no ping"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":"mcpbridge-nudge-3","result":{}},{"jsonrpc":"2.0","id":"mcpbridge-nudge-4","result":{}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, w, _ := pipeConn(t, 0)
			s.nudge = newNudger(time.Hour, s.writeLine)
			go func() {
				_, _ = w.Write([]byte(tt.lines + "\n" + `{"jsonrpc":"2.0","id":5,"result":{"ok":true}}` + "\n"))
			}()
			msg, err := s.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r, ok := msg.(*jsonrpc.Response)
			if !ok || r.ID.Raw() != int64(5) {
				t.Fatalf("Read = %#v, want the answer to request 5", msg)
			}
		})
	}
}
