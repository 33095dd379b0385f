package main

import (
	"io"
	"os"
	"sync"
)

// console is stderr shared by log lines and the progress display. On a terminal it keeps one
// status line at the bottom, redrawn with \r after every other write; elsewhere status lines
// are never written. It is safe for concurrent use.
type console struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool // w is a terminal: status lines and \r updates
	color  bool // tty and NO_COLOR empty or unset
	status string
	// mask, when set, masks secrets in what is written (cliEnv.secrets).
	mask func([]byte) []byte
}

func newConsole(w io.Writer) *console {
	tty := isTerminal(w)
	return &console{w: w, tty: tty, color: tty && os.Getenv("NO_COLOR") == ""}
}

// ANSI colours used on a colour console.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiFaint = "\x1b[2m"
	ansiReset = "\x1b[0m"
	clearLine = "\r\x1b[K"
)

// paint wraps s in an ANSI colour when the console has colour.
func (c *console) paint(color, s string) string {
	if !c.color {
		return s
	}
	return color + s + ansiReset
}

// Write writes p above the status line.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status != "" {
		io.WriteString(c.w, clearLine)
	}
	q := p
	if c.mask != nil {
		q = c.mask(p)
	}
	n, err := c.w.Write(q)
	if err == nil {
		n = len(p)
	}
	if c.status != "" {
		io.WriteString(c.w, c.status)
	}
	return n, err
}

// println writes one line above the status line.
func (c *console) println(s string) {
	c.Write([]byte(s + "\n"))
}

// setStatus replaces the status line (terminal only); "" removes it.
func (c *console) setStatus(s string) {
	if !c.tty {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s == c.status {
		return
	}
	io.WriteString(c.w, clearLine+s)
	c.status = s
}
