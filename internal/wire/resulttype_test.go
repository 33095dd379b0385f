package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnknownResultType: on 2026-07-28 a resultType other than complete and input_required
// is refused; before it, it is passed over as go-sdk does.
func TestUnknownResultType(t *testing.T) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"x"}],"resultType":"later"}`)
	if _, err := decodeCallResult(raw, true, nil); err == nil || !strings.Contains(err.Error(), `"later"`) {
		t.Errorf("modern: %v", err)
	}
	if _, err := decodeCallResult(raw, false, nil); err != nil {
		t.Errorf("legacy: %v", err)
	}
}
