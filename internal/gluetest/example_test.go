package gluetest_test

import (
	"context"
	"fmt"

	"github.com/ttalk/mcpbridge/internal/gluetest"
)

func Example() {
	ctx := context.Background()
	set, err := gluetest.Connect(ctx)
	if err != nil {
		panic(err)
	}
	defer set.Close()
	for _, t := range set.Tools() {
		out, err := t.Handler(ctx, []byte(`{"message":"hi","zeta":1}`))
		fmt.Printf("%s: %q %v\n", t.Name, out, err)
	}
	// Output:
	// echo: "echo: hi" <nil>
	// fail: "the disk is full: free some space and try again" the disk is full: free some space and try again
	// order: "order: {\"message\":\"hi\",\"zeta\":1}" <nil>
}
