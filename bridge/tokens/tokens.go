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
	c := codec.NewO200kBase()
	c.SetErrorMode(codec.ErrorModeReplace) // invalid UTF-8 counts as U+FFFD, as an API would see it
	return &Counter{codec: c}
}

// Count returns the number of o200k_base tokens in s. Special-token text such as
// "<|endoftext|>" is counted as ordinary text. If the tokenizer fails (it should not), the
// count falls back to the bytes/4 estimate.
func (c *Counter) Count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		return (len(s) + 3) / 4
	}
	return n
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
