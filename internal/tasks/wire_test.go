package tasks

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseCreate(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		flav      Flavour
		id        string
		poll, ttl time.Duration
		pollGiven bool
		wantErr   bool
	}{
		{"2025", `{"task":{"taskId":"a","status":"working","ttl":60000,"pollInterval":5000,"createdAt":"2025-11-25T10:30:00Z"}}`, Flavour2025, "a", 5 * time.Second, time.Minute, true, false},
		{"extension", `{"resultType":"task","taskId":"b","status":"working","ttlMs":null,"pollIntervalMs":0}`, FlavourExt, "b", 0, 0, true, false},
		{"poll absent", `{"resultType":"task","taskId":"c","status":"working"}`, FlavourExt, "c", 0, 0, false, false},
		{"poll a year", `{"resultType":"task","taskId":"d","status":"working","pollIntervalMs":3.1536e10}`, FlavourExt, "d", MaxDuration, 0, true, false},
		{"poll negative", `{"resultType":"task","taskId":"e","status":"working","pollIntervalMs":-1}`, FlavourExt, "e", 0, 0, false, false},
		{"no id", `{"resultType":"task","status":"working"}`, FlavourExt, "", 0, 0, false, true},
		{"id with a newline", `{"task":{"taskId":"a\nb","status":"working"}}`, Flavour2025, "", 0, 0, false, true},
		{"unknown status", `{"resultType":"task","taskId":"f","status":"paused"}`, FlavourExt, "", 0, 0, false, true},
		{"not an object", `[1]`, FlavourUnknown, "", 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, f, err := parseCreate(json.RawMessage(tc.raw))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseCreate(%s) error = %v, want error %v", tc.raw, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if f != tc.flav || st.ID != tc.id || st.PollInterval != tc.poll || st.TTL != tc.ttl || st.pollGiven != tc.pollGiven {
				t.Errorf("parseCreate(%s) = %v id %q poll %s (given %v) ttl %s", tc.raw, f, st.ID, st.PollInterval, st.pollGiven, st.TTL)
			}
		})
	}
}

func TestIsTaskHandle(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"task":{"taskId":"a","status":"working"}}`:            true,
		`{"resultType":"task","taskId":"a"}`:                    true,
		`{"content":[{"type":"text","text":"task"}]}`:           false,
		`{"content":[],"structuredContent":{"task":"laundry"}}`: false,
		`{"content":[],"task":"not an object"}`:                 false,
		`{"resultType":"complete","content":[]}`:                false,
	} {
		if got := IsHandle(json.RawMessage(raw)); got != want {
			t.Errorf("IsHandle(%s) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzParseTask: whatever a server sends as a task, parsing never panics, and what it
// accepts is bounded: a usable ID, a known status, a bounded UTF-8 message, bounded times.
func FuzzParseTask(f *testing.F) {
	for _, s := range []string{
		`{"taskId":"a","status":"working","statusMessage":"x","ttl":1,"pollInterval":2}`,
		`{"taskId":"b","status":"completed","ttlMs":null,"result":{"content":[]}}`,
		`{"taskId":"c","status":"failed","error":{"code":-32603,"message":"m"}}`,
		`{"taskId":"d","status":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}}}`,
		`{"taskId":"e","status":"failed","error":"nope"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, ext bool) {
		fl := Flavour2025
		if ext {
			fl = FlavourExt
		}
		st, err := parseTask(b, fl)
		if err != nil {
			return
		}
		if CheckID(st.ID) != nil || !st.Status.known() {
			t.Fatalf("parseTask(%q) accepted id %q status %q", b, st.ID, st.Status)
		}
		if len(st.StatusMessage) > MaxStatusMsgBytes+len("…") || !utf8.ValidString(st.StatusMessage) {
			t.Fatalf("parseTask(%q): status message of %d bytes", b, len(st.StatusMessage))
		}
		if st.TTL < 0 || st.TTL > MaxDuration || st.PollInterval < 0 || st.PollInterval > MaxDuration {
			t.Fatalf("parseTask(%q): ttl %s poll %s", b, st.TTL, st.PollInterval)
		}
		if st.rpcErr != nil && len(st.rpcErr.Message) > MaxStatusMsgBytes+len("…") {
			t.Fatalf("parseTask(%q): error message of %d bytes", b, len(st.rpcErr.Message))
		}
	})
}
