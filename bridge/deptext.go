package bridge

// Behaviour of dependencies that the bridge can only recognise by an error's text or code.
// Each is pinned by a test against the real dependency (deptext_test.go), so an upgrade that
// changes one fails a test instead of silently changing retries or config messages.

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkFrameTooLarge reports go-sdk's stdio error for an inbound line over MaxLineLength
// (mcp.errFrameTooLarge, unexported): the stream cannot be resynchronised, the session is dead.
func sdkFrameTooLarge(err error) bool {
	return strings.Contains(err.Error(), "exceeded the configured maximum line length")
}

// sdkClientClosing reports go-sdk's answer to a request made while its connection was
// closing (jsonrpc2.ErrClientClosing, code -32003, internal): the request was never sent.
func sdkClientClosing(err error) bool {
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == -32003 {
		return true
	}
	return strings.Contains(err.Error(), "client is closing")
}
