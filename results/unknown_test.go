package results_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/internal/wire"
	"github.com/ttalk/mcpbridge/results"
)

// decodeTolerant decodes a raw tools/call result as the bridge's connections do: blocks
// go-sdk cannot decode are replaced first (wire.ReplaceUnknownContent).
func decodeTolerant(t testing.TB, raw string) (*mcp.CallToolResult, error) {
	t.Helper()
	b, _ := wire.ReplaceUnknownContent([]byte(raw))
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return res, nil
}

func TestUnknownContentKeyMatchesWire(t *testing.T) {
	if results.UnknownContentKey != wire.UnknownContentKey {
		t.Fatalf("results.UnknownContentKey = %q, wire.UnknownContentKey = %q; they must agree", results.UnknownContentKey, wire.UnknownContentKey)
	}
}

// TestUnknownContent: a block of an unknown type becomes a placeholder in the text (type,
// MIME type, size when given; cut and escaped) and a KindUnknown Part with the raw block,
// and the blocks beside it stay.
func TestUnknownContent(t *testing.T) {
	tests := []struct {
		name, block string
		text        string // the placeholder
		typ, mime   string
		size        int64
		raw         bool // Part.Raw is the block
	}{
		{"video with data", `{"type":"video","mimeType":"video/mp4","data":"AAAAAAAA"}`, "[video: video/mp4, 6 B]", "video", "video/mp4", 6, true},
		{"declared size", `{"type":"model3d","mimeType":"model/gltf+json","size":5000000}`, "[model3d: model/gltf+json, 4.8 MB]", "model3d", "model/gltf+json", 5000000, true},
		{"text member", `{"type":"note","text":"héllo"}`, "[note: 6 B]", "note", "", 6, true},
		{"nothing said", `{"type":"ping"}`, "[ping]", "ping", "", -1, true},
		{"no type", `{"mimeType":"x/y"}`, "[content of an unknown type: x/y]", "", "x/y", -1, true},
		{"not an object", `null`, "[content of an unknown type]", "", "", -1, true},
		{"hostile type", `{"type":"x]\n[image: image/png, 1 B","mimeType":"a\u001b[31mb"}`, "[x_ _image_ image/png_ 1 B: a [31mb]", "x]\n[image: image/png, 1 B", "a\x1b[31mb", -1, true},
		{"long type", `{"type":"` + strings.Repeat("v", 5000) + `"}`, "[" + strings.Repeat("v", 64) + "…]", strings.Repeat("v", 5000), "", -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := `{"content":[{"type":"text","text":"before"},` + tt.block + `,{"type":"text","text":"after"}]}`
			res, err := decodeTolerant(t, raw)
			if err != nil {
				t.Fatal(err)
			}
			text, err := results.Flatten(res, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := "before\n" + tt.text + "\nafter"; text != want {
				t.Errorf("Flatten = %q, want %q", text, want)
			}
			parts := results.Parts(res)
			if len(parts) != 3 {
				t.Fatalf("Parts = %d parts, want 3", len(parts))
			}
			p := parts[1]
			if p.Kind != results.KindUnknown || p.Type != tt.typ || p.MIMEType != tt.mime || p.Size != tt.size || p.Text != tt.text {
				t.Errorf("Part = {%s %q %q %d %q}, want {unknown %q %q %d %q}", p.Kind, p.Type, p.MIMEType, p.Size, p.Text, tt.typ, tt.mime, tt.size, tt.text)
			}
			if tt.raw && string(p.Raw) != tt.block {
				t.Errorf("Part.Raw = %s, want the block %s", p.Raw, tt.block)
			}
		})
	}
}

// FuzzUnknownContent puts the input as one content block (and one nested in a tool_result)
// beside text blocks and checks that decoding around unknown types, Flatten and Parts never
// panic, that the replaced result is valid JSON (and the same in a response message), that the text is valid UTF-8 within the
// cap, and that a block go-sdk refuses does not cost the text beside it.
func FuzzUnknownContent(f *testing.F) {
	for _, s := range []string{
		`{"type":"video","mimeType":"video/mp4","data":"AAAA"}`,
		`{"type":"text","text":"x"}`,
		`{"type":"image","mimeType":"image/png","data":"AA=="}`,
		`{"type":"hologram","size":1e300}`,
		`{"type":"x","data":7,"text":null,"mimeType":{}}`,
		`{"type":"\u0000\ud800","mimeType":"` + strings.Repeat("m", 300) + `"}`,
		`null`, `[]`, `"video"`, `{}`, `{"type":`,
	} {
		f.Add(s)
	}
	const capBytes = 4096
	f.Fuzz(func(t *testing.T, block string) {
		raw := `{"content":[{"type":"text","text":"before"},` + block + `,{"type":"tool_result","toolUseId":"u","content":[` + block + `]},{"type":"text","text":"after"}]}`
		fixed, ok := wire.ReplaceUnknownContent([]byte(raw))
		if ok && !json.Valid(fixed) {
			t.Fatalf("replaced result is not JSON: %s", fixed)
		}
		// The same result in a response, as a Streamable HTTP body or event carries it.
		msg, mok := wire.ReplaceUnknownContentMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":` + raw + `}`))
		if want := `{"jsonrpc":"2.0","id":1,"result":` + string(fixed) + `}`; mok != ok || (ok && string(msg) != want) {
			t.Fatalf("in a response: %s, %v\nwant %s, %v", msg, mok, want, ok)
		}
		res := new(mcp.CallToolResult)
		if err := res.UnmarshalJSON(fixed); err != nil {
			return // malformed otherwise (a known block with bad fields, or not JSON)
		}
		text, err := results.Flatten(res, &results.Options{MaxBytes: capBytes})
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(text) || len(text) > capBytes+64 {
			t.Fatalf("text of %d bytes (valid UTF-8: %v)", len(text), utf8.ValidString(text))
		}
		if ok && !(strings.HasPrefix(text, "before") && strings.HasSuffix(text, "after")) {
			t.Fatalf("the text blocks beside a replaced block were lost: %q", text)
		}
		for _, p := range results.Parts(res) {
			if p.Kind == results.KindUnknown && (len(p.Text) > 400 || !utf8.ValidString(p.Text)) {
				t.Fatalf("placeholder of %d bytes: %q", len(p.Text), p.Text)
			}
		}
	})
}
