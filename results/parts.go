package results

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PartKind is the kind of a [Part].
type PartKind string

// The kinds of [Part].
const (
	KindText         PartKind = "text"
	KindImage        PartKind = "image"
	KindAudio        PartKind = "audio"
	KindResource     PartKind = "resource"      // an embedded resource (text or blob)
	KindResourceLink PartKind = "resource_link" // a link the host may read with resources/read
)

// Part is one content block of a tool result in a form a multimodal host can hand to its
// model. Data aliases the result's decoded bytes; treat it as read-only.
type Part struct {
	Kind     PartKind
	Text     string // text, or an embedded text resource's text
	MIMEType string
	Data     []byte // decoded bytes of an image, audio clip or blob resource
	URI      string // resource, resource_link
	Name     string // resource_link
	// Size is the length in bytes of Data (or of Text for text parts and text resources),
	// or for a resource_link its declared size, -1 when not declared.
	Size        int64
	Annotations *mcp.Annotations
	// Type and Raw are, for a KindUnknown part, the block's type and the block as the
	// server sent it (untrusted; nil when it was not JSON); Text is then its placeholder.
	Type string
	Raw  json.RawMessage
}

// Parts returns one Part per content block of res, in order, for hosts whose model takes
// images or audio; pair it with the text from [Flatten] (Parts leaves out structuredContent).
// Nil blocks are skipped; an embedded resource without contents gives a resource Part with
// no URI; a sampling-only tool_use block gives a text Part with a placeholder, and a
// tool_result block gives the Parts of its nested content. A nil res gives nil.
func Parts(res *mcp.CallToolResult) []Part {
	if res == nil {
		return nil
	}
	return appendParts(make([]Part, 0, len(res.Content)), res.Content, 0)
}

func appendParts(parts []Part, cs []mcp.Content, depth int) []Part {
	for _, c := range cs {
		switch c := c.(type) {
		case *mcp.TextContent:
			if u, ok := unknownContent(c); ok {
				parts = append(parts, unknownPart(u))
			} else if c != nil {
				parts = append(parts, Part{Kind: KindText, Text: c.Text, Size: int64(len(c.Text)), Annotations: c.Annotations})
			}
		case *mcp.ImageContent:
			if c != nil {
				parts = append(parts, Part{Kind: KindImage, MIMEType: c.MIMEType, Data: c.Data, Size: int64(len(c.Data)), Annotations: c.Annotations})
			}
		case *mcp.AudioContent:
			if c != nil {
				parts = append(parts, Part{Kind: KindAudio, MIMEType: c.MIMEType, Data: c.Data, Size: int64(len(c.Data)), Annotations: c.Annotations})
			}
		case *mcp.ResourceLink:
			if c != nil {
				size := int64(-1)
				if c.Size != nil && *c.Size >= 0 {
					size = *c.Size
				}
				parts = append(parts, Part{Kind: KindResourceLink, URI: c.URI, Name: c.Name, MIMEType: c.MIMEType, Size: size, Annotations: c.Annotations})
			}
		case *mcp.EmbeddedResource:
			if c == nil {
				continue
			}
			p := Part{Kind: KindResource, Annotations: c.Annotations}
			if r := c.Resource; r != nil {
				p.URI, p.MIMEType, p.Text, p.Data = r.URI, r.MIMEType, r.Text, r.Blob
				p.Size = int64(len(r.Blob) + len(r.Text))
			}
			parts = append(parts, p)
		//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
		case *mcp.ToolUseContent:
			if c != nil {
				t := label("tool use", "", c.Name)
				parts = append(parts, Part{Kind: KindText, Text: t, Size: int64(len(t))})
			}
		//lint:ignore SA1019 a server may still send these in a CallToolResult (go-sdk decodes any content type there)
		case *mcp.ToolResultContent:
			if c != nil && depth < maxNesting {
				parts = appendParts(parts, c.Content, depth+1)
			}
		}
	}
	return parts
}
