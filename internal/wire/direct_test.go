package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResults are tools/call results: the all-text ones decodeCallToolResult decodes
// itself, and others it leaves to go-sdk.
var toolResults = []string{
	`{"content":[{"type":"text","text":"42"}]}`,
	`{"content":[{"type":"text","text":"a\"\\\u00e9\n"},{"type":"text","text":"b","_meta":{"k":[1,2.5]}}],"isError":true}`,
	`{"content":[],"structuredContent":{"n":9007199254740993,"s":"x","l":[null,true]},"_meta":{"m":1}}`,
	`{"content":null,"isError":null,"structuredContent":null}`,
	`{}`,
	`{"isError":false}`,
	`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"x","annotations":{"priority":0.5}}]}`,
	`{"content":[{"type":"text","text":"x"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
	`{"content":[{"type":"text","text":1}]}`,
	`{"content":[null]}`,
	`{"content":{"type":"text","text":"one object"}}`,
	`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`,
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[{"type":"text","text":"42"}],"resultType":"complete"}`,
	`{"content":[],"resultType":"complete","resultType":"later"}`,
	`{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}},"requestState":"s"}`,
	`{"resultType":"input_required","inputRequests":{}}`,
	`{"resultType":"input_required"}`,
	`{"resultType":"later","content":[]}`,
	`{"resultType":5}`,
	`{"Content":[{"type":"text","text":"x"}]}`,
	`{"content":[{"type":"text","text":"x"}],"isError":1}`,
	`{"content":[{"text":"no type"}]}`,
	`[]`,
}

// TestDecodeCallToolResultMatchesGoSDK: the same result value (or both fail) as go-sdk's
// CallToolResult.UnmarshalJSON of what the connections give it.
func TestDecodeCallToolResultMatchesGoSDK(t *testing.T) {
	for _, raw := range toolResults {
		t.Run(shorten(raw), func(t *testing.T) { compareToolResult(t, []byte(raw)) })
	}
	if _, _, ok := fastToolResult([]byte(toolResults[0]), nil); !ok {
		t.Error("a plain text result took the slow path")
	}
}

// FuzzDecodeCallToolResult: never panics; on valid JSON, agrees with go-sdk.
func FuzzDecodeCallToolResult(f *testing.F) {
	for _, raw := range toolResults {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			_, _ = decodeCallToolResult(raw)
			return
		}
		compareToolResult(t, raw)
	})
}

// compareToolResult checks both decoders against go-sdk's: decodeCallToolResult gives
// what go-sdk gives, and decodeCallResult on a modern protocol too, except that it refuses
// a resultType other than complete and input_required.
func compareToolResult(t *testing.T, raw []byte) {
	t.Helper()
	got, err := decodeCallToolResult(raw)
	want := new(mcp.CallToolResult)
	var werr error
	if string(raw) != "null" { // go-sdk's Await decodes a null result into nothing
		// What the connections hand go-sdk: blocks it cannot decode replaced (unknown.go).
		fixed, _ := ReplaceUnknownContent(raw)
		werr = want.UnmarshalJSON(fixed)
	}
	if (err != nil) != (werr != nil) {
		t.Fatalf("%s: err %v, go-sdk err %v", raw, err, werr)
	}
	if err != nil {
		return
	}
	mc := &metaCache{}
	modern, merr := decodeCallResult(raw, true, mc)
	if again, aerr := decodeCallResult(raw, true, mc); (aerr != nil) != (merr != nil) || !reflect.DeepEqual(again, modern) {
		t.Fatalf("%s: a second decode (cached _meta) differs: %#v, %v", raw, again, aerr)
	}
	sm := &metaCache{shared: true}
	shared, serr := decodeCallResult(raw, true, sm)
	if again, aerr := decodeCallResult(raw, true, sm); (serr != nil) != (merr != nil) || (aerr != nil) != (merr != nil) ||
		!reflect.DeepEqual(shared, modern) || !reflect.DeepEqual(again, modern) {
		t.Fatalf("%s: the shared cache decodes differently: %#v, %v", raw, shared, serr)
	}
	var rt string
	forMembers(raw, func(k string, v []byte) bool {
		if k == "resultType" {
			rt, _ = stringValue(v)
		}
		return true
	})
	if known := rt == "" || rt == "complete" || rt == "input_required"; known != (merr == nil) {
		t.Fatalf("%s: resultType %q: modern decode err %v", raw, rt, merr)
	}
	if merr == nil && !reflect.DeepEqual(modern, want) {
		t.Fatalf("%s: modern decode %#v, go-sdk %#v", raw, modern, want)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s:\n got  %s %#v\n want %s %#v", raw, g, got, w, want)
	}
}

// TestMetaCacheSharing: a shared cache hands out the one decoded _meta (its callers only
// read it); a private one hands out copies, so a caller's change reaches nobody else.
func TestMetaCacheSharing(t *testing.T) {
	raw := []byte(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	for _, shared := range []bool{false, true} {
		mc := &metaCache{shared: shared}
		a, ok1 := mc.decode(raw)
		b, ok2 := mc.decode(raw)
		c, ok3 := mc.decode(raw)
		if !ok1 || !ok2 || !ok3 {
			t.Fatal("decode failed")
		}
		same := reflect.ValueOf(b).Pointer() == reflect.ValueOf(c).Pointer()
		if same != shared {
			t.Errorf("shared %v: two cached decodes are the same map: %v", shared, same)
		}
		if !shared {
			a["x"] = 1
			b["io.modelcontextprotocol/serverInfo"].(map[string]any)["name"] = "changed"
			if d, _ := mc.decode(raw); d["x"] != nil || d["io.modelcontextprotocol/serverInfo"].(map[string]any)["name"] != "s" {
				t.Errorf("a caller's change reached the cache: %v", d)
			}
		}
	}
}

// TestEncodeCallToolParams: raw arguments are copied as they are; the rest is encoded as
// go-sdk would.
func TestEncodeCallToolParams(t *testing.T) {
	for _, tc := range []struct {
		p    *mcp.CallToolParams
		want string
	}{
		{&mcp.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a": 40, "b":"<2>"}`)}, `{"name":"add","arguments":{"a": 40, "b":"<2>"}}`},
		{&mcp.CallToolParams{Name: "n\"x"}, `{"name":"n\"x","arguments":{}}`},
		{&mcp.CallToolParams{Name: "m", Arguments: map[string]any{"q": "<&>"}}, `{"name":"m","arguments":{"q":"<&>"}}`},
		{&mcp.CallToolParams{Meta: mcp.Meta{"progressToken": "t1"}, Name: "p", Arguments: json.RawMessage(`{}`)}, `{"_meta":{"progressToken":"t1"},"name":"p","arguments":{}}`},
	} {
		got, err := encodeCallToolParams(tc.p, nil)
		if err != nil || string(got) != tc.want {
			t.Errorf("encode(%+v) = %s, %v; want %s", tc.p, got, err, tc.want)
		}
	}
	if _, err := encodeCallToolParams(&mcp.CallToolParams{Name: "x", Arguments: json.RawMessage(`{"a":`)}, nil); err == nil {
		t.Error("invalid raw arguments: no error")
	}
}
