// Package redistest runs a real redis-server for the tests of the shared token store and of
// replicas: on a free loopback port, in a temporary directory, without persistence, for as
// long as the test runs.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start runs redis-server with args added to its command line until tb ends and returns
// its address once it answers (a NOAUTH answer counts: args may set a password). Without
// redis-server the test is skipped, or fails under CI=true (.ci/run installs Debian's).
func Start(tb testing.TB, args ...string) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("redis-server is not installed (.ci/run installs Debian's redis-server)")
		}
		tb.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	var out lockedBuffer
	cmd := exec.Command(bin, append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", tb.TempDir(),
		"--save", "", "--appendonly", "no", "--protected-mode", "yes"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for err := c.Ping(context.Background()).Err(); err != nil && !strings.HasPrefix(err.Error(), "NOAUTH"); err = c.Ping(context.Background()).Err() {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server did not answer: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling until the deadline, not waiting for an event
	}
	return addr
}

// lockedBuffer is the server's output, written by exec's copying goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
