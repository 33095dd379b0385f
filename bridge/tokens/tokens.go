// Package tokens counts what tool definitions cost a model's context, in o200k_base tokens
// (the encoding of OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series models), with the vocabulary
// embedded so counting works offline.
//
// It is a separate package because the vocabulary is large (it adds several megabytes to a
// binary and builds a 200,000-entry table on first use): programs that do not count tokens do
// not link it. Package bridge never imports it.
//
//	c := tokens.New()
//	perTool := c.Tool(tool)           // one definition as json.Marshal(tool) gives it
//	perServer := c.Tools(srv.Tools()) // a server, a Set, any subset
//	request := c.JSON(toolsJSON)      // a provider's "tools" array as sent
//
// # Other vendors
//
// Anthropic and Google do not publish their tokenizers for offline use; their count-tokens
// endpoints (Anthropic's /v1/messages/count_tokens, Gemini's countTokens) give exact numbers.
// For them the o200k_base count is the documented estimate: the same text in the same
// envelope, not the vendor's own count, which differs by tokenizer and model generation.
// Anthropic also adds a tool-use system prompt of a few hundred tokens to every request that
// has tools (its pricing page lists the number per model); these counts leave it out, as they
// leave out every vendor's fixed per-request overhead.
package tokens

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
	"github.com/ttalk/mcpbridge/bridge"
)

// Counter counts o200k_base tokens. It is safe for concurrent use. The vocabulary is built
// once per process, on the first New.
type Counter struct {
	codec *codec.Codec
}

// New returns a Counter. The first call in a process builds the vocabulary (tens of
// milliseconds); later calls are cheap.
func New() *Counter {
	return &Counter{codec: codec.NewO200kBase()}
}

// chunkBytes is how much text is tokenized at once. The tokenizer's byte-pair merging is
// quadratic in the length of one piece (a run of letters, digits or punctuation), and a
// server's text is untrusted: text is cut into chunks of at most chunkBytes where no piece
// spans the cut — before a space that follows a non-space, or between an ASCII letter or
// digit and the punctuation after it — so the count is the same; only a run with no such
// place in chunkBytes (a pathological one) is cut at a rune boundary, which may change its
// count by a token or two.
const chunkBytes = 256

// Count returns the number of o200k_base tokens in s. Special-token text such as
// "<|endoftext|>" is counted as ordinary text; each run of invalid UTF-8 counts as U+FFFD,
// as an API would decode it. If the tokenizer fails (it should not), the count falls back
// to the bytes/4 estimate.
func (c *Counter) Count(s string) int {
	s = strings.ToValidUTF8(s, "\uFFFD")
	total := 0
	for len(s) > 0 {
		cut := cutPoint(s)
		n, err := c.codec.Count(s[:cut])
		if err != nil {
			n = (cut + 3) / 4
		}
		total += n
		s = s[cut:]
	}
	return total
}

// JSON counts the tokens of a JSON document as sent, such as the "tools" array of a request
// (json.Marshal of a provider.Toolset).
func (c *Counter) JSON(data []byte) int { return c.Count(string(data)) }

// Tool counts one tool's definition as json.Marshal(t) gives it —
// {"name","description","parameters"}, compact — but without escaping <, > and & (model APIs
// read them as sent, and the provider formats send them plain). The provider formats wrap the
// same three fields in a few more tokens each.
func (c *Counter) Tool(t bridge.Tool) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil { // Parameters that are not JSON: count the parts
		return c.Count(t.Name) + c.Count(t.Description) + c.Count(string(t.Parameters))
	}
	return c.JSON(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// Tools sums Tool over ts: the tokens a model reads for these definitions, one tool after
// another.
func (c *Counter) Tools(ts []bridge.Tool) int {
	n := 0
	for _, t := range ts {
		n += c.Tool(t)
	}
	return n
}

// cutPoint is where the next chunk of s ends: all of s when short, else the last place
// within chunkBytes where no piece is cut (see chunkBytes), else the last rune boundary.
func cutPoint(s string) int {
	if len(s) <= chunkBytes {
		return len(s)
	}
	for i := chunkBytes; i > chunkBytes/4; i-- {
		if s[i] == ' ' && !isSpace(s[i-1]) || isAlnum(s[i-1]) && isPunct(s[i]) {
			return i
		}
	}
	i := chunkBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i == 0 {
		i = chunkBytes
	}
	return i
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func isAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// isPunct is ASCII punctuation that starts a piece of its own after a letter or digit: not
// an apostrophe (contractions such as "'s" belong to the word before).
func isPunct(b byte) bool {
	return b > ' ' && b < 0x7f && !isAlnum(b) && b != '\''
}
