package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// capDescription cuts desc to at most max bytes (on a UTF-8 boundary) plus a marker saying
// how much was cut; ok is false when it was cut. max < 0 means no cap.
func capDescription(desc string, max int) (string, bool) {
	if max < 0 || len(desc) <= max {
		return desc, true
	}
	head := desc[:max]
	for len(head) > 0 && !utf8.RuneStart(desc[len(head)]) {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s… [description cut: %d of %d bytes shown]", head, len(head), len(desc)), false
}

// errListBudget is wrapped by the error of a listing over MaxListTools or MaxListBytes.
var errListBudget = errors.New("tool listing over budget")

// messageLimit is the transport's per-message limit for o (0 keeps the transport default).
func (o *options) messageLimit() int { return o.MaxMessageBytes }

// listBudget counts one listing against MaxListTools and MaxListBytes.
type listBudget struct {
	maxTools int
	maxBytes int64
	tools    int
	bytes    int64
}

func (o *options) newListBudget() *listBudget {
	return &listBudget{maxTools: o.MaxListTools, maxBytes: o.MaxListBytes}
}

// add counts one page: its decoded tool count and the raw tool objects captured for it.
func (b *listBudget) add(tools int, raw []json.RawMessage) error {
	b.tools += tools
	for _, r := range raw {
		b.bytes += int64(len(r))
	}
	switch {
	case b.tools > b.maxTools:
		return fmt.Errorf("%w: more than %d tools (Options.MaxListTools)", errListBudget, b.maxTools)
	case b.bytes > b.maxBytes:
		return fmt.Errorf("%w: more than %d bytes of tool definitions (Options.MaxListBytes)", errListBudget, b.maxBytes)
	}
	return nil
}
