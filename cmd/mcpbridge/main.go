package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, give the default behaviour back so a second Ctrl-C ends the
	// program at once even if a clean shutdown hangs.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// Exit codes.
const (
	exitOK     = 0 // everything worked
	exitUsage  = 1 // bad command line or servers file
	exitFailed = 2 // a server failed, or the tool call failed
)

// exitError carries the exit code of a failed command. quiet means the message was already
// shown (by the flag package or in the command's own output).
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// exitCode reports err on stderr (unless it is quiet) and returns the process exit code:
// 0 for nil, the code of an *exitError, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	code := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.quiet {
			return code
		}
	}
	fmt.Fprintln(stderr, "mcpbridge:", escapeText(err.Error(), true))
	return code
}
