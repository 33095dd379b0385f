package schemaguard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// A tool's schema is measured and compiled once, by its bytes; each call's arguments are
// checked and validated against it.
func Example() {
	var cache schemaguard.Cache
	ctx := context.Background()
	sch, problem := cache.Schema(ctx, json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		"inputSchema", schemaguard.Limits{MaxCost: 100_000, MaxNodes: 5_000})
	fmt.Printf("problem: %q\n", problem)

	args, _ := schemaguard.NormalizeArgs(json.RawMessage(`null`))
	fmt.Println(string(args), sch.ValidateJSON(ctx, args))
	err := sch.ValidateJSON(ctx, json.RawMessage(`{"n":"x"}`))
	fmt.Println(errors.Is(err, schemaguard.ErrInvalidArguments))
	// Output:
	// problem: ""
	// {} <nil>
	// true
}
