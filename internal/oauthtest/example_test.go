package oauthtest_test

import (
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// Without a token the MCP server answers 401.
func Example() {
	as := oauthtest.New(mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil))
	defer as.Close()
	resp, err := http.Post(as.URL(), "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 401
}
