package catalog_test

import (
	"fmt"
	"strings"

	"github.com/ttalk/mcpbridge/internal/catalog"
)

func Example() {
	n := catalog.NewNamer()
	for _, t := range []struct{ server, remote string }{
		{"fs", "read_file"},
		{"web", "read_file"}, // clashes: prefixed with the server ID
		{"web", "fetch.url"}, // invalid: sanitised
		{"db", strings.Repeat("q", 70)},
	} {
		name, why := n.Assign(t.server, "", t.remote)
		fmt.Printf("%s %q\n", name, why)
	}
	fmt.Println(catalog.Selected([]string{"read_*"}, []string{"*_secret"}, "read_secret"))
	// Output:
	// read_file ""
	// web__read_file "\"read_file\" is taken by an earlier tool; prefixed with the server ID"
	// fetch_url "contains '.'"
	// qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq_efc93e11 "longer than 64 bytes"
	// false
}
