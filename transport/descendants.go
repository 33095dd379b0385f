package transport

import (
	"crypto/rand"
	"encoding/hex"
)

// TagEnv is the environment variable every stdio server process is started with: a random
// value unique to the connection. Its descendants inherit it, including daemons that
// double-fork and call setsid to leave the process group; on Linux, Close finds those by the
// tag (in /proc/<pid>/environ) and kills them. A process that clears its environment before
// daemonizing escapes; see the "Hostile servers" section of package bridge for what a host
// can do.
const TagEnv = "MCPBRIDGE_SERVER_TAG"

// newTag returns a fresh random tag value.
func newTag() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
