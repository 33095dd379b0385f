package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttalk/mcpbridge/bridge/config"
)

// Read returns the enabled servers in file order and the warnings, for a tool that shows
// them; a misspelt key is an error naming the line.
func ExampleRead() {
	dir, err := os.MkdirTemp("", "config-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "servers.yaml")
	const servers = `servers:
  files:
    command: [server-filesystem, /data]
    autoApprove: [read_file]
    envFile: .env
  search:
    url: https://search.example.com/mcp
    timeouts: {call: 30s}
`
	if err := os.WriteFile(file, []byte(servers), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	cfgs, warnings, err := config.Read(file)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cfgs {
		fmt.Println(c.ID, c.Command, c.URL, c.CallTimeout)
	}
	fmt.Println(len(warnings), "warning(s)")

	if err := os.WriteFile(file, []byte("servers:\n  s:\n    comand: x\n"), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = config.Read(file)
	fmt.Println(err != nil)
	// Output:
	// files server-filesystem  0s
	// search  https://search.example.com/mcp 30s
	// 1 warning(s)
	// true
}
