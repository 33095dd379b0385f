package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/catalog"
)

// lockCheck is a slog.Handler that, for every record, checks that the goroutine logging
// holds none of the server's locks (TryLock fails only while some goroutine holds it; in
// this test nothing else does while the server logs).
type lockCheck struct {
	s       atomic.Pointer[Server]
	mu      sync.Mutex
	records []string
	held    []string
}

func (h *lockCheck) Enabled(context.Context, slog.Level) bool { return true }
func (h *lockCheck) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lockCheck) WithGroup(string) slog.Handler            { return h }

func (h *lockCheck) Handle(_ context.Context, r slog.Record) error {
	var held []string
	if s := h.s.Load(); s != nil {
		for _, name := range slices.Concat(s.pool.HeldLocks(), s.tasks.HeldLocks(), s.relist.HeldLocks(),
			s.notify.HeldLocks(), s.secrets.HeldLocks(), s.opts.tel.HeldLocks()) {
			held = append(held, name+" while logging "+r.Message)
		}
		if s.catMu.TryLock() {
			s.catMu.Unlock()
		} else {
			held = append(held, "Server.catMu while logging "+r.Message)
		}
	}
	h.mu.Lock()
	h.records = append(h.records, r.Message)
	h.held = append(h.held, held...)
	h.mu.Unlock()
	return nil
}

// No log line is written under a lock of the server, at start-up (renames, skipped tools,
// tool problems, exposed tools the server cannot serve) or when a re-listing finds new
// problems: a slow log handler, or one that calls back into the server, must never block or
// deadlock it. (The whole lock order is documented on Server.)
func TestNoLogUnderALock(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "messy", Version: "1"}, nil)
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "do.thing", InputSchema: json.RawMessage(`{"type":"object"}`)}, ok) // renamed
	srv.AddTool(&mcp.Tool{Name: "wordy", Description: strings.Repeat("w", 10_000), InputSchema: json.RawMessage(`{"type":"object"}`)}, ok)
	cfg := ServerConfig{ID: "messy", Expose: []string{ExposeResources}, InProcess: func() (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := srv.Connect(context.Background(), st, nil)
		return ct, err
	}}
	h := &lockCheck{}
	changed := make(chan ToolsChange, 1)
	o := resolve(&Options{Logger: slog.New(h), OnToolsChanged: func(_ context.Context, c ToolsChange) { changed <- c }})
	s := newServer(cfg, o, nil)
	h.s.Store(s)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// dial's steps, with the server known to the handler from the start.
	sess, err := s.pool.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed, raw, err := s.list(ctx, sess)
	if err != nil {
		t.Fatal(err)
	}
	s.install(ctx, sess, listed, raw)
	s.build(catalog.NewNamer())

	// A re-listing that finds a new problem.
	srv.AddTool(&mcp.Tool{Name: "wordier", Description: strings.Repeat("w", 20_000), InputSchema: json.RawMessage(`{"type":"object"}`)}, ok)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no re-listing")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, want := range []string{"tool renamed", "tool problem", "tool skipped"} {
		if !strings.Contains(strings.Join(h.records, "\n"), want) {
			t.Errorf("no %q was logged (records: %q)", want, h.records)
		}
	}
	if n := strings.Count(strings.Join(h.records, "\n"), "tool problem"); n < 2 {
		t.Errorf("%d tool problems logged, want the one at start-up and the one after re-listing", n)
	}
	for _, held := range h.held {
		t.Errorf("a lock was held: %s", held)
	}
}
