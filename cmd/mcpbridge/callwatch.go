package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/ttalk/mcpbridge/bridge"
)

// callWatch shows what a server reports while `mcpbridge call` waits: progress
// notifications and, for a tool that runs as an MCP task, each change of the task's status,
// one line each on stderr (escaped: the text is the server's). Lines that arrive after the
// call returned (the bridge delivers them from a goroutine of its own) are dropped.
type callWatch struct {
	con *console

	mu   sync.Mutex // held while a line is written, so end waits for it
	task string     // the last task ID seen
	done bool
}

// end stops the lines: the call returned.
func (w *callWatch) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}

func (w *callWatch) progress(_ context.Context, p bridge.Progress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	var line string
	if p.Status != "" {
		w.task = p.TaskID
		line = fmt.Sprintf("task %s: %s", strconv.Quote(p.TaskID), p.Status)
	} else {
		line = "progress " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
		if p.Total > 0 {
			line += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
		}
	}
	if p.Message != "" {
		line += ": " + p.Message
	}
	w.con.println(escapeLine(line))
}

// interrupted explains a call ended by Ctrl-C: a task it ran was cancelled on the server.
func (w *callWatch) interrupted(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.task != "" {
		return fmt.Errorf("interrupted; task %s was cancelled on the server: %w", strconv.Quote(w.task), err)
	}
	return fmt.Errorf("interrupted: %w", err)
}
