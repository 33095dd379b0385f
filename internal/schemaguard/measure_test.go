package schemaguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Every schema is measured when it is listed, however little of the listing's deadline is
// left: measuring is linear, so its finding (over budget, or broken) never depends on how
// loaded the machine was. Only compiling (quadratic) waits for first use.
func TestSchemaMeasuredAfterTheDeadline(t *testing.T) {
	var chain strings.Builder
	chain.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&chain, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	chain.WriteString(`"d40":{"type":"string"}}}`)
	huge := `{"type":"object","properties":{"a":{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}}}`
	tests := []struct {
		name, schema, want string
		maxNodes           int
	}{
		{"larger than the byte cap", huge, "is over the validation budget, arguments are not validated: it is larger than 2097152 bytes", 5000},
		{"over the cost budget", chain.String(), "is over the validation budget, arguments are not validated: its worst-case validation work", 5000},
		{"over the node budget", `{"type":"object","properties":{` + props(200) + `}}`, "is over the validation budget, arguments are not validated: it has more than 100 subschemas", 100},
		{"fine", `{"type":"object","properties":{"a":{"type":"string"}}}`, "", 5000},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the listing's deadline has passed
	for _, tt := range tests {
		lim := Limits{MaxCost: 100_000, MaxNodes: tt.maxNodes}
		var c Cache
		c.Begin()
		v, problem := c.Schema(ctx, json.RawMessage(tt.schema), "inputSchema", lim)
		c.End()
		if !strings.Contains(problem, tt.want) || (tt.want == "") != (v != nil) {
			t.Errorf("%s: validator %v, problem %q; want %q", tt.name, v != nil, problem, tt.want)
		}
	}
}

// A schema that measures within budget but does not compile, listed too late to compile:
// its first use says so (ErrNotCompiled, with a problem worded as at listing) and passes the
// value on, every time.
func TestSchemaNotCompiledOnFirstUse(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var c Cache
	c.Begin()
	v, problem := c.Schema(ctx, json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`), "inputSchema", Limits{MaxCost: 100_000, MaxNodes: 5000})
	c.End()
	if v == nil || problem != "" {
		t.Fatalf("Schema = %v, %q; want a validator (compiling waits for first use)", v, problem)
	}
	for range 2 {
		err := v.ValidateJSON(context.Background(), json.RawMessage(`{"a":"x"}`))
		if !errors.Is(err, ErrNotCompiled) {
			t.Fatalf("ValidateJSON = %v, want ErrNotCompiled", err)
		}
		if p := NotCompiledProblem("inputSchema", err); !strings.HasPrefix(p, "inputSchema does not compile, arguments are not validated: ") || strings.Contains(p, ErrNotCompiled.Error()) {
			t.Errorf("problem = %q", p)
		}
	}
}

// The Cache holds no copy of a schema's bytes (issue 37: it keyed them by string(raw), a
// copy of every inputSchema): what it retains over the schemas' own bytes, for schemas
// of 32 KiB that are mostly one description, is far below their size, and a re-listing
// of the same bytes finds the same Schema.
func TestCacheKeepsNoCopyOfBytes(t *testing.T) {
	const n, size = 16, 32 << 10
	raws := make([]json.RawMessage, n)
	for i := range raws {
		desc := strings.Repeat("x", size)
		raws[i] = json.RawMessage(fmt.Sprintf(`{"type":"object","description":"%d%s","properties":{"a":{"type":"string"}}}`, i, desc))
	}
	lim := Limits{MaxCost: 100_000, MaxNodes: 5000}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var c Cache
	before := heap()
	c.Begin()
	first := make([]*Schema, n)
	for i, raw := range raws {
		first[i], _ = c.Schema(context.Background(), raw, "inputSchema", lim)
	}
	c.End()
	held := int64(heap()) - int64(before)
	if held > n*size/2 {
		t.Errorf("the Cache retains %d bytes over %d schemas of %d bytes; want well under their size (no copy)", held, n, size)
	}
	c.Begin()
	for i, raw := range raws {
		if v, _ := c.Schema(context.Background(), slices.Clone(raw), "inputSchema", lim); v != first[i] {
			t.Errorf("schema %d: a re-listing of the same bytes measured it again", i)
		}
	}
	c.End()
	runtime.KeepAlive(raws)
	runtime.KeepAlive(first)
}
