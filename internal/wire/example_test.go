package wire_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/internal/wire"
)

// A line read from a stdio server is decoded without go-sdk's per-message buffers, and a
// message is written back in the bytes go-sdk's encoder produces.
func Example() {
	msgs, err := wire.DecodeLine([]byte(`{"jsonrpc":"2.0","id":-1,"result":{"content":[]}}`), nil)
	if err != nil {
		panic(err)
	}
	r := msgs[0].(*jsonrpc.Response)
	fmt.Println(r.ID.Raw(), string(r.Result))

	line, _ := wire.AppendMessage(nil, &jsonrpc.Request{Method: "notifications/initialized"})
	fmt.Print(string(line))
	// Output:
	// -1 {"content":[]}
	// {"jsonrpc":"2.0","method":"notifications/initialized"}
}
