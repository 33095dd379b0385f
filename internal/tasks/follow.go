package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Host is what following a task for a caller needs of the server that follows it, passed in
// as funcs so that the server's types stay its own: P is its progress type.
type Host[P any] struct {
	// Client is the server's tasks client.
	Client *Client
	// Life ends when the server closes; it ends every wait.
	Life context.Context
	// ProgressOf is the caller's progress callback carried by ctx (nil: none).
	ProgressOf func(ctx context.Context) func(P)
	// AsProgress is a task's new state as the caller's progress.
	AsProgress func(t Task) P
	// Hold routes the progress notifications of token tok (the call that created the task)
	// to fn until release.
	Hold func(tok, tool, taskID string, fn func(P)) (release func())
	// Post runs f behind the progress callbacks not yet run; Flush waits (briefly) until the
	// callbacks posted so far have run.
	Post  func(f func())
	Flush func(ctx context.Context)
	// Status tells the server's own callbacks (the call's span, its status hook) a task's
	// new state.
	Status func(ctx context.Context, t Task)
	// Fail is the caller's error for a lifecycle error (returned as is when it already is
	// one); Ended the caller's error when the wait's ctx ended (timeout: the task timeout).
	Fail  func(err error) error
	Ended func(ctx context.Context, label string, timeout time.Duration, err error) error
}

// Followed is one task a server follows for a caller: the tasks client's run, and the
// progress of the call that created it.
type Followed[P any] struct {
	*Run
	h *Host[P]
	// progressTok is the progressToken of the call that created the task (valid for the
	// task's life); progress receives its notifications and the task's status.
	progressTok string
	progress    func(P)
}

// Follow starts following task id of tool ("" when unknown) under ctx.
func (h *Host[P]) Follow(ctx context.Context, tool, id string, f Flavour) *Followed[P] {
	r := &Followed[P]{h: h}
	r.Run = h.Client.NewRun(ctx, tool, id, f, r.observed)
	return r
}

// Created follows the task a tools/call of tool created instead of answering (raw: the
// handle; tok: the call's progressToken, "" without one), with the caller's progress in ctx.
func (h *Host[P]) Created(ctx context.Context, tool string, raw json.RawMessage, sess any, tok string) (*Followed[P], error) {
	r := &Followed[P]{h: h, progress: h.ProgressOf(ctx), progressTok: tok}
	var err error
	if r.Run, err = h.Client.Created(ctx, tool, raw, sess, r.observed); err != nil {
		return nil, err
	}
	return r, nil
}

// observed tells the server's callbacks a task's new state: the call's span, its
// WithProgress callback and Options.OnTaskStatus.
func (r *Followed[P]) observed(ctx context.Context, t Task) {
	h := r.h
	if fn := r.progress; fn != nil {
		p := h.AsProgress(t)
		h.Post(func() { fn(p) })
	}
	h.Status(ctx, t)
}

// Await follows the task to its end and returns the tool's result. It is bounded by
// timeout, the task timeout (and ctx, and Close); when it gives up on a task that has not
// ended, the tasks client cancels the task on the server.
func (r *Followed[P]) Await(ctx context.Context, timeout time.Duration) (*mcp.CallToolResult, error) {
	h := r.h
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(h.Life, cancel)
	defer stop()
	if r.progress == nil {
		r.progress = h.ProgressOf(ctx)
	}
	if r.progressTok != "" && r.progress != nil {
		release := h.Hold(r.progressTok, r.Tool(), r.ID(), r.progress)
		defer release()
	}
	res, err := h.Client.Await(ctx, r.Run)
	r.flush(ctx)
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, h.Ended(ctx, r.Label(), timeout, err)
	}
	return nil, r.Fail(err)
}

// flush waits (briefly) until the WithProgress callback has seen the statuses posted so far,
// so a caller has the task's last status before the call returns.
func (r *Followed[P]) flush(ctx context.Context) {
	if r.progress != nil {
		r.h.Flush(ctx)
	}
}

// Fail wraps a lifecycle error for the caller (Host.Fail), naming the tool and the task.
func (r *Followed[P]) Fail(err error) error {
	var te *Error
	if errors.As(err, &te) && te.TaskID == r.ID() { // it names the task itself
		if r.Tool() != "" {
			err = fmt.Errorf("tool %q: %w", r.Tool(), err)
		}
		return r.h.Fail(err)
	}
	return r.h.Fail(fmt.Errorf("%s: %w", r.Label(), err))
}
