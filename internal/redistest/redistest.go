// Package redistest runs a real redis-server for the tests of the shared token store and of
// replicas: on a free loopback port, in a temporary directory, without persistence, for as
// long as the test runs.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
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
	deadline := time.Now().Add(20 * time.Second)
	for r, err := Do(addr, "PING"); err != nil || (r != "PONG" && !strings.HasPrefix(r, "NOAUTH")); r, err = Do(addr, "PING") {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server did not answer: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling until the deadline, not waiting for an event
	}
	return addr
}

// Do sends one command to the redis-server at addr over a new connection and returns the
// reply's first line without its type byte ("PONG", "OK", the value of a short bulk string;
// an error reply such as "NOAUTH Authentication required." is returned as text, not as err).
// It speaks RESP by hand so that this package needs no client module: the root module's
// go.mod stays free of go-redis, which only bridge/redisstore and integration require.
func Do(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write(req.Bytes()); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("redistest: empty reply from %s", addr)
	}
	if line[0] == '$' { // a bulk string: its length, then the bytes
		if line == "$-1" {
			return "", nil
		}
		v, err := r.ReadString('\n')
		return strings.TrimRight(v, "\r\n"), err
	}
	return line[1:], nil
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
