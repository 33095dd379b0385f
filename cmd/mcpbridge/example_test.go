package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Example_call runs "mcpbridge call" in-process against a stdio server (this test binary
// acting as one) and prints what the model would read. Package main cannot be imported, so
// the example lives in the package itself.
func Example_call() {
	dir, err := os.MkdirTemp("", "mcpbridge-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	bin, _ := os.Executable()
	cfg := filepath.Join(dir, "servers.yaml")
	yaml := "servers:\n  basic:\n    command: " + strconv.Quote(bin) + "\n    env: {" + serverEnv + ": basic}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	err = run(context.Background(), []string{"call", cfg, "echo", `{"text":"hello"}`}, os.Stdout, io.Discard)
	fmt.Println("exit code:", exitCode(err, io.Discard))
	// Output:
	// basic says: hello
	// exit code: 0
}
