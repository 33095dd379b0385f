package catalog

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Release drops the decoded inputSchema, outputSchema and _meta (and the descriptive
// fields) of the tools go-sdk listed, once they have been converted. On protocol 2026-07-28
// go-sdk v1.8.0 keeps every tools/list result of a session for the session's life (its list
// cache stores a result whatever its ttlMs), and those are the very *mcp.Tool values
// ListTools returned: maps several times the size of the schemas' JSON, which the bridge
// already keeps as bytes. A tool's inputSchema stays when it has an x-mcp-header marker,
// since go-sdk reads it to mirror arguments into headers on requests it sends itself.
//
// The cache only answers a later tools/list of the same session within the result's ttlMs
// and without a tools/list_changed in between (go-sdk empties it on one); the bridge lists
// again only after a list_changed or on a new session, so it never gets these tools back.
func Release(tools []*mcp.Tool, raw map[string]json.RawMessage) {
	for _, t := range tools {
		if t == nil {
			continue
		}
		if r, ok := raw[t.Name]; !ok || !bytes.Contains(r, []byte(`"x-mcp-header"`)) {
			t.InputSchema = nil
		}
		t.OutputSchema = nil
		t.Meta = nil
		// The bridge's own copy (its remote tool) keeps these; after a re-listing that found
		// a tool unchanged it keeps the first listing's, and these would be a second copy.
		t.Title, t.Description, t.Annotations, t.Icons = "", "", nil, nil
	}
}
