package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/ttalk/mcpbridge/transport"
)

// A read from a closed pipe ends the session: the next call redials (and a read-only call is
// retried) instead of failing on a dead session.
func TestReadFromClosedPipeIsDeadSession(t *testing.T) {
	sess := &Session{dead: make(chan struct{}), Conn: &transport.Conn{}}
	for _, err := range []error{
		&fs.PathError{Op: "read", Path: "|0", Err: os.ErrClosed},
		fmt.Errorf("calling %q: %w", "tools/call", &fs.PathError{Op: "read", Path: "|0", Err: os.ErrClosed}),
		errors.New("calling \"tools/call\": read |0: file already closed"),
	} {
		if !IsDead(err, sess) {
			t.Errorf("IsDead(%v) = false", err)
		}
	}
	if IsDead(errors.New("tool said no"), sess) {
		t.Error("an ordinary error counts as a dead session")
	}
}
