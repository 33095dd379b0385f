package schemaguard

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var argCases = []string{
	`{"a":40,"b":2}`,
	`{}`,
	` { "q" : "x y" , "n" : -1.5e3 , "l" : [ 1 , "two" , null , true , false , { } , [ ] ] } `,
	`{"esc":"a\"b\\c\u00e9\n","uni":"héllo ✓","dup":1,"dup":2}`,
	`{"big":9007199254740993,"neg":-0,"exp":1E+2}`,
	`{"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	"{\"bad\":\"\xff\xfe\"}",
	`[1,2]`,
	`"s"`,
	`3`,
	`{"a":01}`,
	`{"a":1}x`,
	`{"a":`,
}

// TestDecodeArgsMatchesJSONSchema: the same value as jsonschema.UnmarshalJSON.
func TestDecodeArgsMatchesJSONSchema(t *testing.T) {
	for _, c := range argCases {
		compareArgs(t, []byte(c))
	}
}

// FuzzDecodeArgs: DecodeArgs gives jsonschema.UnmarshalJSON's value, and fails where it
// fails.
func FuzzDecodeArgs(f *testing.F) {
	for _, c := range argCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { compareArgs(t, b) })
}

func compareArgs(t *testing.T, b []byte) {
	t.Helper()
	got, err := DecodeArgs(b)
	want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if (err != nil) != (werr != nil) {
		t.Fatalf("%q: err %v, jsonschema err %v", b, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got  %#v\n want %#v", b, got, want)
	}
}

// BenchmarkDecodeArgs: the small-argument decoder against jsonschema.UnmarshalJSON.
func BenchmarkDecodeArgs(b *testing.B) {
	args := []byte(`{"a":40,"b":2}`)
	b.Run("DecodeArgs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeArgs(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonschema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonschema.UnmarshalJSON(bytes.NewReader(args)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
