package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// marshal is encoding/json's encoding of s without HTML escaping: the reference.
func marshal(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "plain", `q"b\s`, "\b\f\n\r\t\x00\x1f\x7f", "<a>&amp;", "é€😀",
		"\u2028\u2029", "a\xffb", "\xe2\x82", "\xed\xa0\x80", "\uFFFD",
	} {
		if got, want := string(Append(nil, s)), marshal(s); got != want {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("a\"\\\n\u2028\xff<")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(Append(nil, s)), marshal(s); got != want {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestAppendNoAlloc(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { _ = Append(buf[:0], "a\nb\u2028c") }); n != 0 {
		t.Errorf("Append allocates %v times into a large enough buffer", n)
	}
}
