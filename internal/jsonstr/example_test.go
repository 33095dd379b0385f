package jsonstr_test

import (
	"fmt"

	"github.com/ttalk/mcpbridge/internal/jsonstr"
)

func Example() {
	b := []byte(`{"text":`)
	b = jsonstr.Append(b, "line one\n<b>two</b>\u2028")
	b = append(b, '}')
	fmt.Println(string(b))
	// Output:
	// {"text":"line one\n<b>two</b>\u2028"}
}
