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
	s := newServer(tb, args)
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	return s.addr
}

// Server is a redis-server that a test stops and starts again on the same address (Kill,
// Restart), keeping what it holds across restarts: it writes every change to an
// append-only file, fsync'd before it answers (appendfsync always), and loads it when it
// starts, as a server with durable storage does.
type Server struct {
	tb   testing.TB
	bin  string
	addr string
	argv []string

	mu  sync.Mutex // guards cmd and out
	cmd *exec.Cmd
	out *lockedBuffer
}

// StartServer runs a durable redis-server (see Server) with args added to its command line
// until tb ends; it returns once the server answers. Without redis-server the test is
// skipped, or fails under CI=true.
func StartServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	s := newServer(tb, append([]string{"--appendonly", "yes", "--appendfsync", "always"}, args...))
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer picks the binary and a free loopback port.
func newServer(tb testing.TB, args []string) *Server {
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
	s := &Server{tb: tb, bin: bin, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	// --save "" --appendonly no unless args say otherwise (a later argument wins).
	s.argv = append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", tb.TempDir(),
		"--save", "", "--appendonly", "no", "--protected-mode", "yes"}, args...)
	tb.Cleanup(s.Kill)
	return s
}

// Addr is the server's address, the same across restarts.
func (s *Server) Addr() string { return s.addr }

// Kill stops the server with SIGKILL (nothing is flushed at exit) and waits until it has
// exited; a stopped server stays stopped. Safe to call from any goroutine.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the killed server again on the same address and returns once it answers
// (its data loaded); a running one is killed first. Safe to call from any goroutine: it
// returns its failure rather than failing the test.
func (s *Server) Restart() error {
	s.Kill()
	return s.start()
}

// start runs the server and waits until it answers PING.
func (s *Server) start() error {
	out := &lockedBuffer{}
	cmd := exec.Command(s.bin, s.argv...)
	cmd.Stdout, cmd.Stderr = out, out
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil
	}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return err
	}
	s.cmd, s.out = cmd, out
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := Do(s.addr, "PING")
		if err == nil && (r == "PONG" || strings.HasPrefix(r, "NOAUTH")) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling until the deadline, not waiting for an event
	}
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
