package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// stdJSON is the reference: encoding/json's Encoder without HTML escaping.
func stdJSON(t *testing.T, v any) (string, bool) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

func checkGeneric(t *testing.T, v any) {
	t.Helper()
	var keys [][]string
	got, ok := appendGeneric(nil, v, 0, &keys)
	want, wantOK := stdJSON(t, v)
	if ok && (!wantOK || string(got) != want) {
		t.Fatalf("appendGeneric(%#v) = %q; encoding/json gives %q, %v", v, got, want, wantOK)
	}
	if !ok && wantOK && isGeneric(v, 0) && !strings.Contains(want, "NaN") {
		t.Fatalf("appendGeneric(%#v) refused a generic value encoding/json encodes as %q", v, want)
	}
}

func TestAppendGeneric(t *testing.T) {
	values := []any{
		nil, true, false, 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-7, 1e-6, 123456789.0, 1e20, 1e21, 1.5e300, 5e-324,
		math.MaxFloat64, math.Inf(1), math.NaN(),
		"", "plain", "<&>", "quote\" back\\slash", "\b\f\n\r\t\x00\x1f\x7f", "\u2028\u2029", "é€😀", "bad \xff\xc3 utf8",
		[]any{}, map[string]any{}, []any{nil, 1.0, "x", []any{map[string]any{"z": 1.0, "a": []any{}}}},
		map[string]any{"b": 1.0, "a": 2.0, "é": 3.0, "A": 4.0, "<k>": "\u2028", "": nil},
		map[string]any{"nested": map[string]any{"y": map[string]any{"x": true}, "a": false}},
		[]any{1, 2},                 // ints: not generic
		map[string]any{"x": int(1)}, // not generic
		json.RawMessage(`{"a":1}`),  // not generic
	}
	for _, v := range values {
		checkGeneric(t, v)
	}
}

// FuzzAppendGeneric checks appendGeneric against encoding/json on decoded JSON values and on
// arbitrary strings (including invalid UTF-8) and numbers.
func FuzzAppendGeneric(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,-3e-9,1e21,"x\u2028<&>"],"b":{"c":null,"d":true}}`), "s\xff\u2029\x01", 1e-7)
	f.Add([]byte(`[]`), "", 0.0)
	f.Add([]byte(`"\ud800"`), "\"\\\b", 123456789012345678901234567890.0)
	f.Fuzz(func(t *testing.T, data []byte, s string, x float64) {
		var v any
		if json.Unmarshal(data, &v) == nil {
			checkGeneric(t, v)
		}
		checkGeneric(t, s)
		checkGeneric(t, x)
		checkGeneric(t, map[string]any{s: []any{s, x}})
	})
}
