package tokens

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// Counts of o200k_base as OpenAI's tiktoken gives them.
func TestCount(t *testing.T) {
	c := New()
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"hello  world", 3},
		{"supercalifragilistic", 6},
		{"We know what we are, but know not what we may be.", 14},
		{"<|endoftext|>", 7}, // special-token text is ordinary text here
	} {
		if got := c.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	// Invalid UTF-8 counts as the U+FFFD an API would decode it to.
	if got, want := c.Count("a\xffb"), c.Count("a\uFFFDb"); got != want {
		t.Errorf("Count with invalid UTF-8 = %d, want %d (as U+FFFD)", got, want)
	}
}

func TestToolAndTools(t *testing.T) {
	c := New()
	a := bridge.Tool{Name: "get_weather", Description: "Current weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	b := bridge.Tool{Name: "noop", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	a.Description += " <b>&</b>"
	if got, want := c.Tool(a), c.Count(`{"name":"get_weather","description":"Current weather for a city. <b>&</b>","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`); got != want {
		t.Errorf("Tool = %d, want %d (the JSON the model reads)", got, want)
	}
	if got, want := c.Tools([]bridge.Tool{a, b}), c.Tool(a)+c.Tool(b); got != want {
		t.Errorf("Tools = %d, want %d", got, want)
	}
	bad := bridge.Tool{Name: "x", Description: "y", Parameters: json.RawMessage(`{not json`)}
	if got := c.Tool(bad); got != c.Count("x")+c.Count("y")+c.Count("{not json") {
		t.Errorf("Tool with invalid Parameters = %d", got)
	}
}

// BenchmarkSweep counts the definitions of the compatibility sweep's 450 tools.
func BenchmarkSweep(b *testing.B) {
	tools := sweepTools(b)
	c := New()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = c.Tools(tools)
	}
	b.ReportMetric(float64(n), "tokens")
}

func sweepTools(tb testing.TB) []bridge.Tool {
	tb.Helper()
	data, err := os.ReadFile("../toolsearch/testdata/sweep.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Servers []struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	var out []bridge.Tool
	for _, s := range doc.Servers {
		for _, t := range s.Tools {
			out = append(out, bridge.Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		}
	}
	return out
}

// Chunking never changes the count of ordinary text, and keeps hostile text linear.
func TestCountChunks(t *testing.T) {
	c := New()
	text := strings.Repeat("Create or update a single file in a GitHub repository, with a commit message. ", 40)
	whole, err := c.codec.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Count(text); got != whole {
		t.Errorf("chunked count %d, whole %d", got, whole)
	}
	for _, hostile := range []string{strings.Repeat("a", 200_000), strings.Repeat("!", 200_000), strings.Repeat("é", 100_000), strings.Repeat(" ", 200_000)} {
		if n := c.Count(hostile); n <= 0 || n > len(hostile) {
			t.Errorf("Count of %d bytes = %d", len(hostile), n)
		}
	}
}

func FuzzCount(f *testing.F) {
	c := New()
	for _, s := range []string{"hello world", "a\xffb", strings.Repeat("ab ", 200), "<|endoftext|>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := c.Count(s); n < 0 || n > len(s)+1 {
			t.Fatalf("Count(%q) = %d", s, n)
		}
	})
}
