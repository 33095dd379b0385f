package bridge_test

import (
	"fmt"
	"os"
)

// rawEnv selects a misbehaving stdio server written directly against JSON-RPC (see
// runRawServer), for failures a well-behaved go-sdk server cannot produce.
const rawEnv = "MCPBRIDGE_TEST_RAW"

// runRawServer runs the raw fixture named mode over stdin/stdout.
func runRawServer(mode string) int {
	fmt.Fprintf(os.Stderr, "unknown raw fixture %q\n", mode)
	return 2
}
