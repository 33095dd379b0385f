package transport

import (
	"crypto/rand"
	"encoding/hex"
)

// TagEnv is the environment variable every stdio server process is started with: a random
// value unique to the connection. Its descendants inherit it, including daemons that
// double-fork and call setsid to leave the process group; on Linux, Close finds those by the
// tag (in /proc/<pid>/environ, read only for the PIDs handed out since the server's own
// process started, at most 4,096 a round) and kills them. Not covered: a descendant that clears or
// rewrites its environment before detaching (on any OS), and macOS and Windows, which have
// no such lookup (on Windows the child's own children are not tracked at all). What a host
// can do: run servers under a supervisor that owns the whole tree — on Linux a cgroup
// (systemd-run --user --scope, a container), on macOS a launchd job, on Windows a Job object.
// (A child subreaper was rejected: PR_SET_CHILD_SUBREAPER is process-wide, so every orphan of
// every library in the host would become the host's zombie to reap.)
const TagEnv = "MCPBRIDGE_SERVER_TAG"

// newTag returns a fresh random tag value.
func newTag() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
