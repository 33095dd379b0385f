package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// CapDescription cuts desc to at most max bytes (on a UTF-8 boundary) plus a marker saying
// how much was cut; ok is false when it was cut. max < 0 means no cap.
func CapDescription(desc string, max int) (string, bool) {
	if max < 0 || len(desc) <= max {
		return desc, true
	}
	head := desc[:max]
	for len(head) > 0 && !utf8.RuneStart(desc[len(head)]) {
		head = head[:len(head)-1]
	}
	return fmt.Sprintf("%s… [description cut: %d of %d bytes shown]", head, len(head), len(desc)), false
}

// DroppedBySDK explains a tool go-sdk left out of its tools/list result, given its raw
// bytes. It does that for an inputSchema with an invalid x-mcp-header marker (on a
// non-primitive property, duplicated, or not an HTTP token), which the spec requires
// clients to drop (SEP-2243).
func DroppedBySDK(raw json.RawMessage) string {
	if bytes.Contains(raw, []byte(`"x-mcp-header"`)) {
		return "dropped: its inputSchema has an invalid x-mcp-header marker (SEP-2243 requires clients to drop such tools)"
	}
	return "dropped by the MCP SDK while decoding tools/list (see its error log)"
}
