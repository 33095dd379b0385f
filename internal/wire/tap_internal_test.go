package wire

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func jsonrpcID(n int64) (jsonrpc.ID, error) { return jsonrpc.MakeID(float64(n)) }

func TestSetMember(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"t","arguments":{"a":"<&>"}}`, `{"name":"t","arguments":{"a":"<&>"},"task":{"ttl":1}}`},
		{`{"task":{"old":true},"name":"t"}`, `{"name":"t","task":{"ttl":1}}`},
		{`{}`, `{"task":{"ttl":1}}`},
		{` null `, `{"task":{"ttl":1}}`},
		{``, `{"task":{"ttl":1}}`},
		{`{"a\u00e9":1}`, `{"aé":1,"task":{"ttl":1}}`},
	} {
		got, err := setMember(json.RawMessage(tc.in), "task", json.RawMessage(`{"ttl":1}`))
		if err != nil || string(got) != tc.want {
			t.Errorf("setMember(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":}`, `{"a":1`} {
		if got, err := setMember(json.RawMessage(bad), "task", json.RawMessage(`{}`)); err == nil {
			t.Errorf("setMember(%s) = %s, want an error", bad, got)
		}
	}
}

func FuzzSetMember(f *testing.F) {
	for _, s := range []string{`{"name":"t","arguments":{}}`, `{}`, `[`, `{"task":1,"task":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := setMember(b, "task", json.RawMessage(`{"ttl":1}`))
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("setMember(%q) = %q: not a JSON object: %v", b, got, err)
		}
		if string(m["task"]) != `{"ttl":1}` {
			t.Fatalf("setMember(%q) = %q: task is %s", b, got, m["task"])
		}
	})
}

func TestTaskRoutingName(t *testing.T) {
	for _, tc := range []struct {
		body, method, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"abc-1"}}`, "tasks/get", "abc-1"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"taskId":" spaced"}}`, "tasks/cancel", "=?base64?IHNwYWNlZA==?="},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/update","params":{"taskId":"é\n"}}`, "tasks/update", "=?base64?w6kK?="},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"x"}}`, "tasks/result", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, "tasks/get", ""},
	} {
		h := http.Header{}
		h.Set("Mcp-Method", tc.method)
		SetTaskRoutingName(h, []byte(tc.body))
		if got := h.Get("Mcp-Name"); got != tc.want {
			t.Errorf("Mcp-Name for %s = %q, want %q", tc.body, got, tc.want)
		}
	}
	// Without the SEP-2243 headers (protocols before 2026-07-28) nothing is added.
	h := http.Header{}
	SetTaskRoutingName(h, []byte(`{"method":"tasks/get","params":{"taskId":"a"}}`))
	if len(h) != 0 {
		t.Errorf("headers %v added to a request without Mcp-Method", h)
	}
}

// A tap whose request never got its answer (the call was abandoned) is forgotten by Done,
// so a long-lived connection does not accumulate them.
func TestTapDoneForgets(t *testing.T) {
	var c Taps
	tap := &Tap{Method: "tools/call"}
	for i := range 3 {
		id, _ := jsonrpcID(int64(i + 1))
		c.follow(id, tap)
	}
	if !c.Waiting() {
		t.Fatal("no tap recorded")
	}
	tap.Done()
	if c.Waiting() {
		t.Errorf("taps left after Done: %d", len(c.m))
	}
}

// TestTapStructured: a tap with Structured keeps the raw structuredContent of each followed
// result (the last one wins; a result without one clears it), apart from what Keep keeps.
func TestTapStructured(t *testing.T) {
	none := func(json.RawMessage) bool { return false }
	for _, tc := range []struct {
		name       string
		keep       func(json.RawMessage) bool
		results    []string
		structured string
		kept       bool
	}{
		{"kept as sent", none, []string{`{"content":[],"structuredContent":{ "z": 1, "a": [2] }}`}, `{ "z": 1, "a": [2] }`, false},
		{"null is none", none, []string{`{"structuredContent":null}`}, ``, false},
		{"the last result", none, []string{`{"structuredContent":{"a":1}}`, `{"content":[]}`}, ``, false},
		{"with Keep", nil, []string{`{"structuredContent":"s"}`}, `"s"`, true},
		{"not an object", none, []string{`[1]`}, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tap := &Tap{Method: "tools/call", Keep: tc.keep, Structured: true}
			for _, r := range tc.results {
				buf := []byte(r)
				tap.offer(buf)
				copy(buf, make([]byte, len(buf))) // the read buffer is reused
			}
			if got := string(tap.StructuredContent()); got != tc.structured {
				t.Errorf("StructuredContent() = %q, want %q", got, tc.structured)
			}
			if kept := tap.Result() != nil; kept != tc.kept {
				t.Errorf("Result() kept = %v, want %v", kept, tc.kept)
			}
		})
	}
	plain := &Tap{Method: "tools/call", Keep: none}
	plain.offer([]byte(`{"structuredContent":{"a":1}}`))
	if plain.StructuredContent() != nil {
		t.Error("a tap without Structured kept the structured content")
	}
}
