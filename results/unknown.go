package results

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// KindUnknown is the kind of a [Part] for a content block of a type this version does not
// know (a type newer than this module, or one a server made up). Part.Raw holds the block
// as the server sent it; Part.Type, MIMEType and Size what it says of itself.
const KindUnknown PartKind = "unknown"

// UnknownContentKey is the _meta key of a text block that stands for a content block of a
// type go-sdk cannot decode (package transport puts it there, so that one such block does
// not fail the whole result): its value is the block's JSON, as a string. [Flatten] renders
// such a block as a placeholder naming its type, MIME type and size, such as
// "[video: video/mp4, 1.2 MB]", and [Parts] gives a [KindUnknown] Part with the raw block.
const UnknownContentKey = "io.github.ttalk.mcpbridge/unknownContent"

// Bounds of what an unknown block shows of itself.
const (
	maxUnknownType = 64  // bytes of its type in the placeholder
	maxUnknownMIME = 128 // bytes of its MIME type
)

// unknownBlock is what an unknown block says of itself.
type unknownBlock struct {
	typ, mime string
	size      int64 // -1: not said
	raw       json.RawMessage
}

// unknownContent reports whether c stands for an unknown block and, if so, decodes it.
// The block is untrusted server data: only its type, MIME type and size are read, each
// bounded; a block that is not a JSON object still gives a placeholder.
func unknownContent(c *mcp.TextContent) (unknownBlock, bool) {
	if c == nil || c.Text != "" || c.Meta == nil {
		return unknownBlock{}, false
	}
	s, ok := c.Meta[UnknownContentKey].(string)
	if !ok {
		return unknownBlock{}, false
	}
	u := unknownBlock{size: -1, raw: json.RawMessage(s)}
	var b struct {
		Type     any             `json:"type"`
		MIMEType any             `json:"mimeType"`
		Data     json.RawMessage `json:"data"`
		Text     json.RawMessage `json:"text"`
		Size     any             `json:"size"`
	}
	if !json.Valid(u.raw) || json.Unmarshal(u.raw, &b) != nil {
		u.raw = nil // not a block at all: a placeholder, nothing for hosts
		return u, true
	}
	u.typ, _ = b.Type.(string)
	u.mime, _ = b.MIMEType.(string)
	switch {
	case len(b.Data) >= 2 && b.Data[0] == '"':
		u.size = base64Size(len(b.Data) - 2)
	case len(b.Text) >= 2 && b.Text[0] == '"':
		var t string
		if json.Unmarshal(b.Text, &t) == nil {
			u.size = int64(len(t))
		}
	default:
		if f, ok := b.Size.(float64); ok && f >= 0 && f < 1<<53 {
			u.size = int64(f)
		}
	}
	return u, true
}

// base64Size is the decoded size of n base64 characters (padding not known: an upper
// bound by at most 2 bytes).
func base64Size(n int) int64 { return int64(n) / 4 * 3 }

// unknownLabel is the placeholder the model reads for u: "[video: video/mp4, 1.2 MB]",
// "[content of an unknown type]" when it names no type. Server strings are cut and their
// control characters escaped.
func unknownLabel(u unknownBlock) string {
	typ := strings.Map(func(r rune) rune {
		if r == '[' || r == ']' || r == ':' || r == ',' {
			return '_'
		}
		return r
	}, redact.Controls(redact.Clip(u.typ, maxUnknownType), ' '))
	if strings.TrimSpace(typ) == "" {
		typ = "content of an unknown type"
	}
	size := ""
	if u.size >= 0 {
		size = sizeNote(u.size)
	}
	return label(typ, "", redact.Clip(u.mime, maxUnknownMIME), size)
}

// unknownPart is the Part of u.
func unknownPart(u unknownBlock) Part {
	return Part{Kind: KindUnknown, Type: u.typ, MIMEType: u.mime, Size: u.size, Raw: u.raw,
		Text: unknownLabel(u)}
}
