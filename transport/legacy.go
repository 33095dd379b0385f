package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// maxErrorPeek bounds the bytes of a refused initialize response read to tell a JSON-RPC
// error from a legacy server's refusal.
const maxErrorPeek = 64 << 10

// legacyRefusal reports whether resp, the answer to an initialize POST, is the signal the
// MCP spec gives for an old HTTP+SSE server: status 400, 404 or 405 without a JSON-RPC error
// body, or a 2xx whose content type is neither application/json nor text/event-stream. A
// refusal that carries a JSON-RPC error (an unsupported protocol version, say) comes from a
// Streamable HTTP server and is not a reason to try SSE: go-sdk surfaces that error. The
// body is peeked at, never consumed: resp.Body still yields all of it.
func legacyRefusal(resp *http.Response, ct string) bool {
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return !peekJSONRPCError(resp)
	}
	return resp.StatusCode >= 200 && resp.StatusCode < 300 &&
		ct != "application/json" && ct != "text/event-stream"
}

// peekJSONRPCError reports whether resp's body starts with a JSON-RPC error response (read
// up to maxErrorPeek bytes), and puts what it read back in front of the rest.
func peekJSONRPCError(resp *http.Response) bool {
	if resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorPeek))
	resp.Body = &peekedBody{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), Closer: resp.Body}
	if err != nil {
		return false
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
	}
	return json.Unmarshal(head, &m) == nil && m.JSONRPC == "2.0" && len(m.Error) > 0 && string(m.Error) != "null"
}

// peekedBody is a response body with its first bytes read and put back.
type peekedBody struct {
	io.Reader
	io.Closer
}
