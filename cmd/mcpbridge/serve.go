package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/internal/serve"
)

// defaultServeAddr is where serve listens unless --addr says otherwise; when the port is
// taken, a free one is used instead.
const defaultServeAddr = "127.0.0.1:7391"

// runServe connects every server in FILE and serves the page until ctx ends (Ctrl-C).
func runServe(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	level := slog.LevelInfo // App requests and refusals are worth seeing while serving
	if fl.verbose {
		level = slog.LevelDebug
	}
	log := newLogger(env.stderr, level)
	if err := serve.CheckAddr(fl.addr); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	servers, _, err := readConfig(env, args[0], log)
	if err != nil {
		return err
	}
	ids := make([]string, len(servers))
	for i, c := range servers {
		ids[i] = c.ID
	}
	fmt.Fprintf(env.stderr, "connecting %d servers…\n", len(servers))
	calls := serve.NewCalls() // the page shows running calls and answers requests for input
	set, err := bridge.Connect(ctx, servers, &bridge.Options{Logger: log, ConnectTimeout: fl.timeout, OnElicitation: calls.Elicit, Skills: true})
	switch {
	case ctx.Err() != nil:
		if set != nil {
			_ = set.Close()
		}
		return &exitError{code: exitFailed, err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	case err != nil:
		return &exitError{code: exitFailed, err: err}
	}
	defer set.Close()

	opts := serve.Options{Set: set, Order: ids, Addr: fl.addr, Logger: log, Version: version(), Tokens: tokens.New(), Calls: calls}
	if opts.Addr == "" {
		opts.Addr = defaultServeAddr
	}
	h, err := serve.Listen(opts)
	if err != nil && fl.addr == "" && errors.Is(err, syscall.EADDRINUSE) {
		opts.Addr = "127.0.0.1:0"
		h, err = serve.Listen(opts)
	}
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if n := len(set.Failed()); n > 0 {
		log.Warn(fmt.Sprintf("%d of %d servers failed; the page shows why", n, len(ids)))
	}
	fmt.Fprintf(env.stdout, "serving %d servers on %s   (Ctrl-C to stop)\n", len(ids), h.URL())
	return h.Serve(ctx)
}
