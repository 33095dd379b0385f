package grant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// CommandTimeout bounds a token command that gives no earlier deadline.
const CommandTimeout = 30 * time.Second

// Source is where a token is read from, fresh each time: exactly one of File, Env and
// Command. What names it is in errors; what it holds never is.
type Source struct {
	File    string   // a file holding the token (a Kubernetes projected service account token)
	Env     string   // an environment variable holding it (a CI system's OIDC token)
	Command []string // a program and its arguments that print it (no shell)
	// What names the token in errors: "workload token", "ID token".
	What string
}

// IsZero reports whether no source is set.
func (s Source) IsZero() bool { return s.File == "" && s.Env == "" && len(s.Command) == 0 }

// Check reports a source that names none or more than one place.
func (s Source) Check() error {
	n := 0
	for _, set := range []bool{s.File != "", s.Env != "", len(s.Command) > 0} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("the %s needs a source: token_file, token_env or token_command", s.what())
	case n > 1:
		return fmt.Errorf("the %s has more than one source: give one of token_file, token_env and token_command", s.what())
	}
	return nil
}

func (s Source) what() string {
	if s.What == "" {
		return "token"
	}
	return s.What
}

// Read returns the token, trimmed of surrounding white space. env is added to a command's
// environment (the audience it should ask for, for example). ctx bounds a command, which
// also gets at most CommandTimeout.
func (s Source) Read(ctx context.Context, env []string) (string, error) {
	if err := s.Check(); err != nil {
		return "", err
	}
	var tok string
	switch {
	case s.File != "":
		f, err := os.Open(s.File)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("the %s file %s does not exist (is the token mounted or written there?)", s.what(), s.File)
		case errors.Is(err, fs.ErrPermission):
			return "", fmt.Errorf("the %s file %s is not readable by this process", s.what(), s.File)
		case err != nil:
			return "", fmt.Errorf("the %s file: %w", s.what(), err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxToken+1))
		if err != nil {
			return "", fmt.Errorf("reading the %s file %s: %w", s.what(), s.File, err)
		}
		if len(b) > MaxToken {
			return "", fmt.Errorf("the %s file %s is larger than %d bytes", s.what(), s.File, MaxToken)
		}
		tok = string(b)
	case s.Env != "":
		v, ok := os.LookupEnv(s.Env)
		if !ok || strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("the environment variable %s, which should hold the %s, is not set or empty", s.Env, s.what())
		}
		if len(v) > MaxToken {
			return "", fmt.Errorf("the environment variable %s is longer than %d bytes", s.Env, MaxToken)
		}
		tok = v
	default:
		out, err := s.run(ctx, env)
		if err != nil {
			return "", err
		}
		tok = out
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", fmt.Errorf("the %s from %s is empty", s.what(), s.place())
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("the %s from %s is not one token (it has white space inside)", s.what(), s.place())
	}
	return tok, nil
}

// place names the source in an error.
func (s Source) place() string {
	switch {
	case s.File != "":
		return "file " + s.File
	case s.Env != "":
		return "environment variable " + s.Env
	}
	return "command " + s.Command[0]
}

// run runs the command: its stdout, bounded, is the token; on failure, the last line of its
// stderr (bounded, printable) says why.
func (s Source) run(ctx context.Context, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr limited
	stdout.max, stderr.max = MaxToken+1, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("the %s command %s did not finish in time: %w", s.what(), s.Command[0], ctx.Err())
	}
	if err != nil {
		why := lastLine(stderr.b.String())
		if why != "" {
			why = ": " + Printable(why, 200)
		}
		return "", fmt.Errorf("the %s command %s failed (%v)%s", s.what(), s.Command[0], err, why)
	}
	if stdout.b.Len() > MaxToken {
		return "", fmt.Errorf("the %s command %s printed more than %d bytes", s.what(), s.Command[0], MaxToken)
	}
	return stdout.b.String(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// limited keeps the first max bytes written to it and discards the rest.
type limited struct {
	b   bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
