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
	// NPMError is npm's own error line in the stderr tail (npm error code E404 and its
	// detail), "" if there is none: npm ends with a pointer to its log, which says nothing.
	NPMError string
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
	if e.NPMError != "" {
		b.WriteString("; npm: ")
		b.WriteString(strconv.Quote(e.NPMError))
	} else if e.LastStderr == "" {
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
	tail := c.Stderr() // secrets redacted
	e.LastStderr = lastLine(tail, maxLastStderr)
	e.NPMError = npmError(tail, maxLastStderr)
	return e
}

// npmError finds npm's (npx's) error in a stderr tail: the "npm error code X" line (npm 7-9:
// "npm ERR! code X") with the first line of detail after it, as
// "npm error code E404: 404 Not Found - GET https://...", cut to max bytes; "" when the
// tail has no npm error code.
func npmError(tail string, max int) string {
	var code, detail string
	for line := range strings.SplitSeq(tail, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "npm error ")
		if !ok {
			rest, ok = strings.CutPrefix(line, "npm ERR! ")
		}
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if c, isCode := strings.CutPrefix(rest, "code "); isCode {
			if code == "" {
				code = strings.TrimSpace(c)
			}
			continue
		}
		if code != "" && detail == "" && strings.Trim(rest, "0123456789 ") != "" && !strings.HasPrefix(rest, "A complete log") {
			detail = rest
		}
	}
	if code == "" {
		return ""
	}
	s := "npm error code " + code
	if detail != "" {
		s += ": " + detail
	}
	return redact.Clip(s, max)
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
