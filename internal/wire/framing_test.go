package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// wireCases are lines the stdio connection may read: messages go-sdk decodes,
// and lines that are not protocol.
var wireCases = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"42"}]}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found","data":{"x":[1,2]}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"method":"roots/list","params":null}`,
	`{"jsonrpc":"2.0","id":3,"method":null}`,
	`{"method":"x","jsonrpc":"2.0","id":1e2}`,
	`{"jsonrpc":"2.0","id":1.9,"result":1}`,
	`{"jsonrpc":"2.0","id":-5,"result":[1,{"a":"}"}]}`,
	`  {"jsonrpc" : "2.0" , "id" : 1 , "result" : { "k" : "v\"\\" } }  `,
	`{"jsonrpc":"2.0","id":"\u00e9\n","result":"é"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"jsonrpc":"1.0"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"result":{"b":2}}`,
	`{"jsonr\u0070c":"2.0","id":1,"result":true}`,
	`{"JSONRPC":"2.0","id":1,"result":true}`,
	`{"jsonrpc":"2.0","id":null,"result":1}`,
	`{"jsonrpc":"2.0","result":1}`,
	`{"jsonrpc":"2.0","id":{},"result":1}`,
	`{"jsonrpc":"2.0","id":true,"result":1}`,
	`{"jsonrpc":2,"id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"error":"boom"}`,
	`{"jsonrpc":"2.0","id":1,"result":1}x`,
	`{"jsonrpc":"2.0","id":1,"result":1`,
	`{"jsonrpc":"2.0","id":1,"result":[1}`,
	`{"jsonrpc":"2.0","id":01,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":"a` + "\t" + `b"}`,
	`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","method":"n"}]`,
	`[]`,
	`[{"jsonrpc":"2.0","id":1,"result":1},]`,
	`Starting server on stdio...`,
	`null`,
	`"hello"`,
	`42`,
	`{}`,
	`{"a":[[[[[[[[[[]]]]]]]]]]}`,
	strings.Repeat("[", 1200) + strings.Repeat("]", 1200),
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
}

// TestDecodeLineMatchesGoSDK checks decodeLine against go-sdk's own decoding
// (jsonrpc.DecodeMessage, with batches split as its ioConn does) on valid
// JSON: the same messages, or both refuse.
func TestDecodeLineMatchesGoSDK(t *testing.T) {
	for _, line := range wireCases {
		t.Run(shorten(line), func(t *testing.T) { compareDecode(t, []byte(line)) })
	}
}

// FuzzDecodeLine: decodeLine never panics, and on valid JSON agrees with
// go-sdk's decoding.
func FuzzDecodeLine(f *testing.F) {
	for _, c := range wireCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n") {
			return
		}
		compareDecode(t, line)
	})
}

func compareDecode(t *testing.T, line []byte) {
	t.Helper()
	got, err := DecodeLine(line, nil)
	if err != nil && !errors.Is(err, ErrNotJSONRPC) {
		t.Fatalf("error %v does not wrap ErrNotJSONRPC", err)
	}
	if !json.Valid(line) {
		// go-sdk's decoder would refuse too (it ends the session); what
		// decodeLine accepts is passed on, and its params or result are
		// validated when go-sdk decodes them.
		return
	}
	want, werr := sdkDecode(line)
	if (err != nil) != (werr != nil) {
		t.Fatalf("DecodeLine(%q): err %v; go-sdk: err %v", line, err, werr)
	}
	if err != nil {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("DecodeLine(%q): %d messages, go-sdk %d", line, len(got), len(want))
	}
	for i := range got {
		if g, w := describe(got[i]), describe(want[i]); g != w {
			t.Fatalf("DecodeLine(%q)[%d]:\n got  %s\n want %s", line, i, g, w)
		}
	}
}

// sdkDecode is go-sdk v1.8.0's ioConn decoding of one line (readBatch).
func sdkDecode(line []byte) ([]jsonrpc.Message, error) {
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err == nil {
		if len(batch) == 0 {
			return nil, errors.New("empty batch")
		}
		var out []jsonrpc.Message
		for _, raw := range batch {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{m}, nil
}

// describe renders a message with its raw members compacted (go-sdk's decoder
// may keep insignificant whitespace that decodeLine keeps too).
func describe(m jsonrpc.Message) string {
	compact := func(b []byte) string {
		if len(b) == 0 {
			return "<nil>"
		}
		var buf bytes.Buffer
		if json.Compact(&buf, b) != nil {
			return "invalid:" + string(b)
		}
		return buf.String()
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%s", m.ID.Raw(), m.Method, compact(m.Params))
	case *jsonrpc.Response:
		var e string
		if m.Error != nil {
			var we *jsonrpc.Error
			if errors.As(m.Error, &we) {
				e = fmt.Sprintf("%d %q %s", we.Code, we.Message, compact(we.Data))
			} else {
				e = m.Error.Error()
			}
		}
		return fmt.Sprintf("response id=%#v result=%s error=%s", m.ID.Raw(), compact(m.Result), e)
	}
	return fmt.Sprintf("%T", m)
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// TestAppendMessageMatchesGoSDK checks appendMessage against
// jsonrpc.EncodeMessage: the same JSON, one line.
func TestAppendMessageMatchesGoSDK(t *testing.T) {
	id1, _ := jsonrpc.MakeID(float64(12))
	ids, _ := jsonrpc.MakeID("a\"<é>\u2028")
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: id1, Method: "tools/call", Params: json.RawMessage(`{"name":"add","arguments":{"a":40,"b":2}}`)},
		&jsonrpc.Request{Method: "notifications/initialized"},
		&jsonrpc.Request{ID: ids, Method: "x<y>", Params: json.RawMessage("{\n  \"a\": [1,\r\n 2]\n}")},
		&jsonrpc.Response{ID: id1, Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: ids},
		&jsonrpc.Response{ID: id1, Error: &jsonrpc.Error{Code: -32601, Message: "no <such> method", Data: json.RawMessage(`{"m":"x"}`)}},
		&jsonrpc.Response{ID: id1, Error: fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32602, Message: "inner"})},
		&jsonrpc.Response{ID: id1, Error: errors.New("plain")},
	}
	for i, m := range msgs {
		got, err := AppendMessage(nil, m)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if bytes.Count(got, []byte("\n")) != 1 || got[len(got)-1] != '\n' {
			t.Fatalf("%d: not one line: %q", i, got)
		}
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%d: %q: %v", i, got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%d:\n got  %s\n want %s", i, got, want)
		}
	}
	if _, err := AppendMessage(nil, &jsonrpc.Request{Method: "m", Params: json.RawMessage("{\n")}); err == nil {
		t.Error("invalid params with a line break: no error")
	}
}

// FuzzValidNumber: validNumber agrees with json.Valid on what skipValue hands it (a run of
// literal bytes starting like a number).
func FuzzValidNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "-1", "1.5", "1e5", "1E+5", "1e-5", "01", "1.", ".5", "-", "1e", "1.e5", "00", "-01", "12345678901234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if len(b) == 0 || !(b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
			return
		}
		for _, c := range b {
			if !literalByte(c) { // skipValue hands it only a run of these
				return
			}
		}
		if got, want := validNumber(b), json.Valid(b); got != want {
			t.Fatalf("validNumber(%q) = %v, json.Valid %v", s, got, want)
		}
	})
}

// FuzzDirectResult: when the direct-answer reader takes a line, decodeLine reads the same
// line as one response with that negative ID, no error and the same result bytes.
func FuzzDirectResult(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":-1,"result":{"content":[{"type":"text","text":"42"}]}}`,
		` {"result":{},"id":-12,"jsonrpc":"2.0"} `,
		`{"jsonrpc":"2.0","id":-1,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":-1,"id":-2,"result":1}`,
		`{"jsonrpc":"2.0","id":-0,"result":1}`,
		`{"jsonrpc":"2.0","id":3,"result":1}`,
		`{"jsonrpc":"2.0","id":-1.5,"result":1}`,
		`{"jsonr\u0070c":"2.0","id":-1,"result":1}`,
		`[{"jsonrpc":"2.0","id":-1,"result":1}]`,
		`{"jsonrpc":"2.0","id":-1,"result":[1,{"a":"}"}]}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		n, result, ok := DirectResult(line)
		if !ok {
			return
		}
		msgs, err := DecodeLine(line, nil)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("%q: directResult took it, decodeLine: %v, %d messages", line, err, len(msgs))
		}
		r, isResp := msgs[0].(*jsonrpc.Response)
		if !isResp || r.Error != nil {
			t.Fatalf("%q: decodeLine gave %#v", line, msgs[0])
		}
		if id, _ := r.ID.Raw().(int64); id != n || n >= 0 {
			t.Fatalf("%q: id %d, decodeLine's %v", line, n, r.ID.Raw())
		}
		if !bytes.Equal(result, r.Result) {
			t.Fatalf("%q: result %s, decodeLine's %s", line, result, r.Result)
		}
	})
}
