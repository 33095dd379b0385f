package apps

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceHTML extracts the HTML document of a ui:// resource from its resources/read
// result: the first contents item's text, or else its blob (go-sdk has already decoded the
// base64), as CopilotKit's renderer does. mimeType is that item's MIME type as the server
// sent it (normally [ResourceMIMEType]); checking it is left to the caller. It fails when
// res is nil, has no contents, or the first item has neither text nor blob.
func ResourceHTML(res *mcp.ReadResourceResult) (html string, mimeType string, err error) {
	if res == nil {
		return "", "", errors.New("resources/read returned no result")
	}
	if len(res.Contents) == 0 || res.Contents[0] == nil {
		return "", "", errors.New("resources/read result has no contents")
	}
	c := res.Contents[0]
	switch {
	case c.Text != "":
		return c.Text, c.MIMEType, nil
	case len(c.Blob) > 0:
		return string(c.Blob), c.MIMEType, nil
	}
	return "", c.MIMEType, fmt.Errorf("resources/read contents[0] (uri %s) has neither text nor blob", quote(c.URI))
}
