package wire

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDirectCallCancelledWhileAnswered (issue 36): the caller's context ends inside
// DeliverResult's window (the call taken out of the table, its answer not yet sent). The
// caller returns its context's error and leaves the pendingCall alone; the answer's send
// still lands (the channel is buffered), and no later call is given that pendingCall with
// the stale answer in it.
func TestDirectCallCancelledWhileAnswered(t *testing.T) {
	var d Calls
	ids := make(chan int64, 1)
	write := func(_ context.Context, m jsonrpc.Message) error {
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			ids <- r.ID.Raw().(int64)
		}
		return nil
	}
	for round := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() {
			_, err := d.call(ctx, write, "tools/call", nil)
			got <- err
		}()
		n := <-ids
		d.mu.Lock() // DeliverResult's first half: the call is out of the table
		pc := d.pending[n]
		delete(d.pending, n)
		d.mu.Unlock()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: %v, want context.Canceled", round, err)
		}
		pc.result = json.RawMessage(`"stale"`) // and its second half
		pc.finish()

		next := make(chan error, 1)
		var result json.RawMessage
		go func() {
			var err error
			result, err = d.call(context.Background(), write, "tools/call", nil)
			next <- err
		}()
		m := <-ids
		d.DeliverResult(m, []byte(`"fresh"`))
		if err := <-next; err != nil || string(result) != `"fresh"` {
			t.Fatalf("round %d: the next call got %s, %v; want \"fresh\"", round, result, err)
		}
	}
}
