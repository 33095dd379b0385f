package bridge_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttalk/mcpbridge/bridge"
)

func ExampleLoadConfig() {
	dir, err := os.MkdirTemp("", "mcpbridge-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "servers.yaml")
	const servers = `servers:
  files:
    command: [npx, -y, "@modelcontextprotocol/server-filesystem", "${DATA_DIR:-/tmp}"]
    tools: {include: ["read_*", "list_*"]}
  search:
    url: https://search.example.com/mcp
    timeouts: {call: 30s}
  old:
    command: legacy-server
    disabled: true
`
	if err := os.WriteFile(file, []byte(servers), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	cfgs, err := bridge.LoadConfig(file)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cfgs {
		fmt.Println(c.ID, c.Include, c.CallTimeout)
	}
	// Output:
	// files [read_* list_*] 0s
	// search [] 30s
}
