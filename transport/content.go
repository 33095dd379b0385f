package transport

import (
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ttalk/mcpbridge/internal/wire"
)

// tolerateContent lets go-sdk decode a result with content blocks of a type it does not
// know: such blocks are replaced, before go-sdk sees the response, by text blocks carrying
// them (wire.ReplaceUnknownContent), which package results renders as placeholders. go-sdk
// would otherwise fail the whole call ("unrecognized content type").
func tolerateContent(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Response); ok && r.Result != nil {
		if fixed, ok := wire.ReplaceUnknownContent(r.Result); ok {
			r.Result = fixed
		}
	}
}
