package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// maxLogLine caps one logged stderr line; longer lines are cut and marked.
const maxLogLine = 4 << 10

// process is a started stdio server.
type process struct {
	cmd     *exec.Cmd
	stdin   *onceCloser // parent's write end of the child's stdin
	stdout  *os.File    // parent's read end of the child's stdout
	stderr  *os.File    // parent's read end of the child's stderr
	conn    *stdioConn
	drained chan struct{} // closed when the stderr drain returns
	started time.Time
	ran     time.Duration // from start to exit; valid once Conn.exited is closed
	waitErr error         // cmd.Wait's result; valid once Conn.exited is closed
}

// onceCloser is a file whose Close runs once (both go-sdk's connection and
// the teardown close stdin).
type onceCloser struct {
	*os.File
	once sync.Once
	err  error
}

func (o *onceCloser) Close() error {
	o.once.Do(func() { o.err = o.File.Close() })
	return o.err
}

// startLocked starts the process and returns the wrapped connection. c.mu is
// held, so a concurrent Close waits for Start to finish.
func (c *Conn) startLocked(ctx context.Context) (mcp.Connection, error) {
	path, err := c.lookPath()
	if err != nil {
		return nil, err
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("creating stdin pipe: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{c.spec.Command}, c.spec.Args...),
		Env:         append(mergeEnv(os.Environ(), c.spec.Env), TagEnv+"="+c.tag),
		Dir:         c.spec.Dir,
		Stdin:       inR, // *os.File: passed to the child as is, no copying goroutines
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: sysProcAttr(),
		// All three are *os.File, so exec starts no copying goroutines and
		// WaitDelay has nothing to wait for; set it anyway so Wait can never
		// hang on I/O if that changes.
		WaitDelay: c.grace,
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting command %q: %w", c.spec.Command, unwrapExecError(err))
	}
	// The child has its own copies; keep only the parent's ends.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	c.started.Store(true)

	p := &process{
		cmd:     cmd,
		stdin:   &onceCloser{File: inW},
		stdout:  outR,
		stderr:  errR,
		drained: make(chan struct{}),
		started: time.Now(),
	}
	c.proc = p
	go c.drainStderr(p)
	go func() {
		err := cmd.Wait()
		// Whatever the leader left behind in its group goes with it. The
		// group ID cannot have been reused yet: the leader was reaped a
		// moment ago.
		_ = signalGroup(cmd.Process, true)
		killTagged(c.tag, cmd.Process.Pid, c.logger) // and what left the group (Linux)
		p.ran = time.Since(p.started)
		p.waitErr = err
		close(c.exited)
	}()

	p.conn = newStdioConn(c, outR, p.stdin, c.spec.MaxFrameBytes)
	p.conn.nudge = newNudger(c.spec.NudgeAfter, p.conn.writeLine)
	c.client.Attach(&p.conn.direct, p.conn.Write)
	return p.conn, nil
}

// stopProcess runs the stdio shutdown sequence; see Conn.Close.
func (c *Conn) stopProcess(p *process) error {
	var err error
	_ = p.stdin.Close()
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
		c.logger.Debug("server did not exit after stdin was closed; sending SIGTERM", "server", c.id)
		_ = signalGroup(p.cmd.Process, false)
		t.Reset(c.grace)
		select {
		case <-c.exited:
		case <-t.C:
			c.logger.Debug("server did not exit after SIGTERM; sending SIGKILL", "server", c.id)
			_ = signalGroup(p.cmd.Process, true)
			t.Reset(killWait)
			select {
			case <-c.exited:
			case <-t.C:
				err = fmt.Errorf("process %d did not exit after SIGKILL", p.cmd.Process.Pid)
			}
		}
	}
	// Let the drain read what the process wrote last, then unblock it in
	// case a descendant that left the group still holds the pipe.
	t.Reset(stderrWait)
	select {
	case <-p.drained:
	case <-t.C:
	}
	_ = p.stderr.Close()
	_ = p.conn.closeFiles() // closes stdout and stdin
	killTagged(c.tag, p.cmd.Process.Pid, c.logger)
	return err
}

// The stderr read buffer: it starts at minStderrBuf and doubles up to maxStderrBuf.
const (
	minStderrBuf = 512
	maxStderrBuf = 32 << 10
)

// drainStderr reads stderr to EOF: into the tail buffer, and line by line to
// the logger at Debug level.
func (c *Conn) drainStderr(p *process) {
	defer close(p.drained)
	ll := lineLogger{logger: c.logger, id: c.id, secrets: c.secrets}
	// Most servers write little or nothing to stderr: the buffer starts small and grows
	// while reads fill it.
	buf := make([]byte, minStderrBuf)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			c.tail.Write(buf[:n])
			ll.write(buf[:n])
			if n == len(buf) && len(buf) < maxStderrBuf {
				buf = make([]byte, 2*len(buf))
			}
		}
		if err != nil {
			ll.flush()
			return
		}
	}
}

// lineLogger splits a byte stream into lines and logs each one.
type lineLogger struct {
	logger   *slog.Logger
	id       string
	secrets  []string // masked in each line
	partial  []byte
	skipping bool // the current line was already logged, truncated
}

func (l *lineLogger) enabled() bool {
	return l.logger.Enabled(context.Background(), slog.LevelDebug)
}

func (l *lineLogger) write(p []byte) {
	if !l.enabled() {
		l.partial, l.skipping = l.partial[:0], false
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
			p = p[i+1:]
		} else {
			p = nil
		}
		if !l.skipping {
			room := maxLogLine - len(l.partial)
			if len(seg) > room {
				l.partial = append(l.partial, seg[:room]...)
				l.emit(true)
				l.skipping = true
			} else {
				l.partial = append(l.partial, seg...)
			}
		}
		if i >= 0 {
			if !l.skipping {
				l.emit(false)
			}
			l.skipping = false
		}
	}
}

func (l *lineLogger) flush() {
	if len(l.partial) > 0 && !l.skipping && l.enabled() {
		l.emit(false)
	}
}

func (l *lineLogger) emit(truncated bool) {
	line := redact.String(strings.ToValidUTF8(string(bytes.TrimRight(l.partial, "\r")), "\uFFFD"), l.secrets)
	l.partial = l.partial[:0]
	attrs := []slog.Attr{slog.String("server", l.id), slog.String("line", line)}
	if truncated {
		attrs = append(attrs, slog.Bool("truncated", true))
	}
	l.logger.LogAttrs(context.Background(), slog.LevelDebug, "server stderr", attrs...)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost bool // bytes were dropped from the front
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.lost = true
		return
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		n := copy(t.buf, t.buf[over:])
		t.buf = t.buf[:n]
		t.lost = true
	}
}

// String returns the tail as valid UTF-8: a rune cut at the front is
// dropped, other invalid bytes become U+FFFD.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	b := t.buf
	if t.lost {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	s := string(b)
	t.mu.Unlock()
	return strings.ToValidUTF8(s, "\uFFFD")
}

// lookPath resolves the command the way the child's environment would: with
// Spec.Env's PATH if set (absolute entries only), else the parent's PATH. A
// command with a path separator is used as is, relative to Dir if set.
func (c *Conn) lookPath() (string, error) {
	name := c.spec.Command
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("command %q: %w", name, unwrapExecError(err))
	}
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		p := name
		if !filepath.IsAbs(p) && c.spec.Dir != "" {
			p = filepath.Join(c.spec.Dir, p)
		}
		resolved, err := exec.LookPath(p)
		if err != nil {
			return fail(err)
		}
		// exec.Cmd would resolve a relative Path against Dir a second time.
		if abs, err := filepath.Abs(resolved); err == nil {
			resolved = abs
		}
		return resolved, nil
	}
	pathEnv, ok := envLookup(c.spec.Env, "PATH")
	if !ok {
		resolved, err := exec.LookPath(name)
		if err != nil {
			return fail(err)
		}
		return resolved, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if resolved, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return resolved, nil
		}
	}
	return fail(fmt.Errorf("%w in the PATH set in env", exec.ErrNotFound))
}

// unwrapExecError drops exec.Error's wrapper, which repeats the command name.
func unwrapExecError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) && ee.Err != nil {
		return ee.Err
	}
	return err
}

// envKeyEqual compares environment variable names (case-insensitively on
// Windows).
func envKeyEqual(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func envLookup(env map[string]string, key string) (string, bool) {
	for k, v := range env {
		if envKeyEqual(k, key) {
			return v, true
		}
	}
	return "", false
}

// mergeEnv returns parent with add applied: same keys overridden, new keys
// appended in sorted order.
func mergeEnv(parent []string, add map[string]string) []string {
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(parent)+len(keys))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if k != "" && slices.ContainsFunc(keys, func(a string) bool { return envKeyEqual(a, k) }) {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}
