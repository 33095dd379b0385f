package transport

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// exitWait is how long a failed read or write of a stdio server's pipes waits
// for the process to exit, to say how it ended.
const exitWait = 500 * time.Millisecond

// processEnd explains a stdio session that failed because the server process
// ended or closed its pipes: how it exited (status or signal), how long it
// ran, and the last line of its stderr, or that stderr was empty. Err, the
// pipe error (wrapping io.EOF, or a write's *fs.PathError), stays in the
// chain.
type processEnd struct {
	// Exited is false when the process closed its stdout but was still
	// running exitWait later.
	Exited bool
	// State is how it exited ("exit status 1", "signal: killed"); "" unless
	// Exited.
	State string
	// Ran is how long the process ran (until now when it had not exited).
	Ran time.Duration
	// LastStderr is the last non-blank line of its stderr tail, "" if none.
	LastStderr string
	// Err is the read or write error that ended the session.
	Err error
}

// Error says how the process ended, then the pipe error.
func (e *processEnd) Error() string {
	var b strings.Builder
	if e.Exited {
		fmt.Fprintf(&b, "server process exited (%s) after %s", e.State, e.Ran.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "server process closed its stdout and is still running after %s", e.Ran.Round(time.Millisecond))
	}
	if e.LastStderr == "" {
		b.WriteString("; nothing on stderr")
	} else {
		b.WriteString("; last stderr line: ")
		b.WriteString(strconv.Quote(e.LastStderr))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the pipe error.
func (e *processEnd) Unwrap() error { return e.Err }

// maxLastStderr caps processEnd.LastStderr.
const maxLastStderr = 300

// explainEnd wraps err, a failed read or write of a stdio server's pipes, in
// a *processEnd, waiting up to exitWait for the process to exit. During Close
// (which ends the process itself) err is returned as is.
func (c *Conn) explainEnd(err error) error {
	c.mu.Lock()
	closing, p := c.closed, c.proc
	c.mu.Unlock()
	if closing || p == nil {
		return err
	}
	e := &processEnd{Err: err}
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-c.exited:
		e.Exited = true
		e.Ran = p.ran
		e.State = "exit status 0"
		var ee *exec.ExitError
		if errors.As(p.waitErr, &ee) {
			e.State = ee.ProcessState.String()
		} else if p.waitErr != nil {
			e.State = p.waitErr.Error()
		}
		// The process's last stderr bytes may still be in the pipe.
		select {
		case <-p.drained:
		case <-t.C:
		}
	case <-t.C:
		e.Ran = time.Since(p.started)
	}
	e.LastStderr = lastLine(c.Stderr(), maxLastStderr) // secrets redacted
	return e
}

// lastLine returns the last non-blank line of s, cut to max bytes (at a rune
// boundary) with control characters escaped by the caller's quoting.
func lastLine(s string, max int) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	return redact.Clip(s, max)
}
