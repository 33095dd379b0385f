// Package callwatch is the mechanics of watching a tool call that know no bridge type: the
// runner of a BeforeCall hook under the call's deadline, the bounded live context an
// AfterCall hook runs in, and the size of a raw result. The host passes its own call and
// end values as type parameters, so nothing here mirrors them.
package callwatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Before runs hook(ctx, c) and returns its error. The hook runs on its own goroutine so
// that a hook waiting for a human that ignores ctx still cannot hold the call past its
// deadline or Close (the goroutine itself lives until the hook returns). A panic in it is
// given to onPanic and fails the call ("panic: <value>"). When ctx ends first, Before
// returns ctx.Err() and waited true: the caller still waited for the hook.
func Before[C any](ctx context.Context, hook func(context.Context, C) error, c C, onPanic func(r any)) (err error, waited bool) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				onPanic(r)
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- hook(ctx, c)
	}()
	select {
	case err = <-done:
		return err, false
	case <-ctx.Done():
		return ctx.Err(), true
	}
}

// After runs hook(actx, c, e) in a live context: ctx's values (its span, per-call headers)
// without its cancellation (the call's bound has just ended), bounded by timeout like the
// call's BeforeCall.
func After[C, E any](ctx context.Context, timeout time.Duration, hook func(context.Context, C, E), c C, e E) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	hook(actx, c, e)
}

// ResultSize is the size of a raw result as a call's end reports it: its content blocks'
// text and data (binary data as decoded), plus structuredContent's JSON.
func ResultSize(res *mcp.CallToolResult) int {
	if res == nil {
		return 0
	}
	n := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			n += len(c.Text)
		case *mcp.ImageContent:
			n += len(c.Data)
		case *mcp.AudioContent:
			n += len(c.Data)
		case *mcp.ResourceLink:
			n += len(c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				n += len(c.Resource.Text) + len(c.Resource.Blob)
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			n += len(b)
		}
	}
	return n
}
