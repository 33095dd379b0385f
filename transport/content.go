package transport

import (
	"bytes"
	"io"
	"net/http"

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

// tolerateBody does what tolerateContent does for go-sdk's Streamable HTTP client, which
// reads its responses from HTTP bodies and decodes them only when the call returns: the
// body of a successful response is rewritten before go-sdk reads it. An application/json
// body (one message, which go-sdk reads whole) is read whole on the first Read, up to
// limit bytes (a larger one passes untouched); an event stream is rewritten event by event
// (wire.ReplaceUnknownContentSSE), holding at most limit bytes.
func tolerateBody(resp *http.Response, ct string, limit int) {
	switch ct {
	case "application/json":
		resp.Body = &contentBody{rc: resp.Body, limit: limit}
	case "text/event-stream":
		resp.Body = &streamBody{Reader: wire.ReplaceUnknownContentSSE(resp.Body, limit), rc: resp.Body}
	}
}

// contentBody is tolerateBody's application/json body.
type contentBody struct {
	rc    io.ReadCloser
	limit int
	r     io.Reader // set by the first Read
}

func (b *contentBody) Read(p []byte) (int, error) {
	if b.r == nil {
		body, err := io.ReadAll(io.LimitReader(b.rc, int64(b.limit)+1))
		switch {
		case err != nil:
			b.r = io.MultiReader(bytes.NewReader(body), errReader{err})
		case len(body) > b.limit:
			b.r = io.MultiReader(bytes.NewReader(body), b.rc) // too large to hold: as sent
		default:
			if fixed, ok := wire.ReplaceUnknownContentMessage(body); ok {
				body = fixed
			}
			b.r = bytes.NewReader(body)
		}
	}
	return b.r.Read(p)
}

func (b *contentBody) Close() error { return b.rc.Close() }

// errReader fails every Read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// streamBody is tolerateBody's text/event-stream body.
type streamBody struct {
	io.Reader
	rc io.ReadCloser
}

func (b *streamBody) Close() error { return b.rc.Close() }
