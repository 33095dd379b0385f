package schemaguard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchRecordsSchema is a schema outside the fast walk's subset ($defs, $ref, anyOf, a
// format, bounds): every call takes the compiled validator.
const benchRecordsSchema = `{"type":"object","$defs":{"rec":{"type":"object","properties":{"id":{"type":"integer","minimum":0},"name":{"type":"string","maxLength":64},"tags":{"type":"array","items":{"type":"string"}},"kind":{"anyOf":[{"const":"a"},{"const":"b"},{"type":"null"}]}},"required":["id","name"]}},"properties":{"records":{"type":"array","items":{"$ref":"#/$defs/rec"}},"note":{"type":"string","pattern":"^[a-z ]*$"}},"required":["records"]}`

func benchRecordsArgs(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"note":"bulk insert","records":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"record %d","tags":["x","y"],"kind":"a"}`, i, i)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// BenchmarkValidate: one call's argument check through the Cache's Schema.ValidateJSON, as
// the bridge makes it: a flat schema (the fast walk), a schema the walk does not handle with
// 1, 100 and 10,000 records, and a rejected call (the error message built).
func BenchmarkValidate(b *testing.B) {
	flat := `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`
	cases := []struct {
		name, schema string
		args         json.RawMessage
		valid        bool
	}{
		{"flat", flat, json.RawMessage(`{"a":40,"b":2}`), true},
		{"flat-invalid", flat, json.RawMessage(`{"a":"40"}`), false},
		{"records-1", benchRecordsSchema, benchRecordsArgs(1), true},
		{"records-100", benchRecordsSchema, benchRecordsArgs(100), true},
		{"records-10000", benchRecordsSchema, benchRecordsArgs(10_000), true},
		{"records-invalid", benchRecordsSchema, json.RawMessage(`{"records":[{"id":1,"name":"a"},{"id":-1,"name":"b"}]}`), false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var c Cache
			l, problem := c.Schema(context.Background(), json.RawMessage(tc.schema), "inputSchema", Limits{MaxCost: 10_000, MaxNodes: 10_000})
			if l == nil {
				b.Fatal(problem)
			}
			ctx := context.Background()
			if err := l.ValidateJSON(ctx, tc.args); (err == nil) != tc.valid {
				b.Fatalf("valid %v: %v", tc.valid, err)
			}
			b.SetBytes(int64(len(tc.args)))
			b.ReportAllocs()
			for b.Loop() {
				_ = l.ValidateJSON(ctx, tc.args)
			}
		})
	}
}
