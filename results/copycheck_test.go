package results_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/results"
)

// copyResult is a result of structured content sc (JSON) and the given text blocks, decoded
// the way the go-sdk client decodes one.
func copyResult(t testing.TB, sc string, texts ...string) *mcp.CallToolResult {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(sc), &v); err != nil {
		t.Fatalf("structured content %s: %v", sc, err)
	}
	res := &mcp.CallToolResult{StructuredContent: v, Content: []mcp.Content{}}
	for _, s := range texts {
		res.Content = append(res.Content, &mcp.TextContent{Text: s})
	}
	return res
}

// TestCopyCheck is rule 1's copy check: which text blocks are copies of the structured
// content (dropped) and which say something else (kept, in order).
func TestCopyCheck(t *testing.T) {
	tests := []struct {
		name string
		sc   string   // the structured content as the server sent it
		text []string // the text blocks
		keep []int    // the blocks that stay, in order
	}{
		{"filesystem read_text_file: a string member", `{"content":"# Notes\n\n- one\n- two\n"}`, []string{"# Notes\n\n- one\n- two\n"}, nil},
		{"string member trimmed", `{"content":"hello\n"}`, []string{"  hello"}, nil},
		{"memory: compact then pretty", `{"entities":[{"name":"a","observations":["x y"]}],"relations":[]}`,
			[]string{`{"entities":[{"name":"a","observations":["x y"]}],"relations":[]}`, "{\n  \"relations\": [],\n  \"entities\": [\n    {\"observations\": [\"x y\"], \"name\": \"a\"}\n  ]\n}"}, nil},
		{"the JSON of a nested member", `{"a":{"x":1,"y":[2,3]},"b":"z"}`, []string{"{\"y\": [2, 3.0], \"x\": 1}"}, nil},
		{"a nested member that differs", `{"a":{"x":1,"y":[2,3]},"b":"z"}`, []string{`{"y":[3,2],"x":1}`}, []int{0}},
		{"labels and values", `{"name":"foo bar","size":12,"tags":["t1","t2"]}`, []string{"Name: foo bar\nSize: 12\nTags: t1, t2."}, nil},
		{"a quoted fragment", `{"name":"foo","n":2}`, []string{`"name": "foo", "n": 2`}, nil},
		{"a bulleted list", `{"items":["alpha","beta gamma"]}`, []string{"Items:\n- alpha\n- beta gamma\n"}, nil},
		{"an embedded member as JSON", `{"user":{"id":7,"login":"ann"}}`, []string{"user = {\"login\":\"ann\",\"id\":7}"}, nil},
		{"one more word stays", `{"name":"foo bar"}`, []string{"Name: foo bar (renamed)"}, []int{0}},
		{"a sign is a fact", `{"balance":5}`, []string{"balance: -5"}, []int{0}},
		{"a longer number", `{"n":12}`, []string{"n: 12.5"}, []int{0}},
		{"a number spelled otherwise", `{"n":12}`, []string{"n: 12.0."}, nil},
		{"a number inside a word", `{"n":12}`, []string{"12th"}, []int{0}},
		{"true is never a copy by concatenation", `{"deleted":false,"ok":true}`, []string{"deleted: true"}, []int{0}},
		{"a bare true is not a member's copy", `{"deleted":false,"ok":true}`, []string{"true"}, []int{0}},
		{"labels only stay", `{"a":"b"}`, []string{"a:"}, []int{0}},
		{"inside a word", `{"s":"ab"}`, []string{"abc"}, []int{0}},
		{"a key is not a value", `{"size":"big"}`, []string{"size"}, []int{0}},
		{"other text stays in order", `{"n":2}`, []string{`{"n":3}`, "n: 2", "2 results"}, []int{0, 2}},
		{"a mark inside a word", `{"a":"x","b":"y"}`, []string{"x-y"}, []int{0}},
		{"a string member's own punctuation", `{"path":"/tmp/a.txt","size":3}`, []string{"Wrote /tmp/a.txt (3)"}, []int{0}},
		{"a string member's own punctuation, labelled", `{"path":"/tmp/a.txt","size":3}`, []string{"path: /tmp/a.txt; size: 3"}, nil},
		{"unicode", `{"city":"Zürich","temp":-3.5}`, []string{"City: Zürich | Temp: -3.5"}, nil},
		{"escapes in the raw bytes", `{"s":"caf\u00e9 \"q\""}`, []string{`café "q"`}, nil},
		{"a top-level array", `[{"id":1},{"id":2}]`, []string{"[{\"id\":1},\n {\"id\":2}]", "id: 1\nid: 2"}, nil},
		{"a top-level string", `"hello  world"`, []string{" hello world\n"}, nil},
		{"an unclosed bracket", `{"a":"x"}`, []string{"[x"}, nil},
		{"brackets that are no JSON", `{"a":"x"}`, []string{"[[[[[[[[[[[[[ x"}, nil},
		{"JSON of something else", `{"a":"x"}`, []string{`{"a":"y"}`, `["x","z"]`}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := copyResult(t, tt.sc, tt.text...)
			opts := &results.Options{MaxBytes: -1, Structured: []byte(tt.sc)}
			got, err := results.Flatten(res, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := compact(t, tt.sc)
			for _, i := range tt.keep {
				want += "\n" + tt.text[i]
			}
			if got != want {
				t.Errorf("Flatten() =\n%s\nwant\n%s", got, want)
			}
			checkNoFactLost(t, res, got)
			// Parts keeps everything: one text part per block.
			if n := len(results.Parts(res)); n < len(tt.text) {
				t.Errorf("len(Parts()) = %d, want at least %d", n, len(tt.text))
			}
		})
	}
}

// compact is js as the model reads structured content sent as js: compacted, keys in
// their order, numbers as written, strings as encoding/json writes them without HTML
// escaping. (An oracle written apart from the package's own compactor, on json tokens.)
func compact(t testing.TB, js string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	type level struct {
		object bool
		n      int
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				b.WriteByte(':')
			case top.n > 0:
				b.WriteByte(',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(v))
			stack = append(stack, level{object: v == '{'})
		case json.Number:
			b.WriteString(string(v))
		case string:
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			b.Truncate(b.Len() - 1) // the Encoder's newline
		default:
			out, _ := json.Marshal(v)
			b.Write(out)
		}
	}
	return b.String()
}

// TestFlattenStructuredKeyOrder: with the raw bytes the model reads the server's key order,
// compacted; bytes that are not JSON fall back to the decoded value's encoding.
func TestFlattenStructuredKeyOrder(t *testing.T) {
	res := copyResult(t, `{"thought":1,"nextThoughtNeeded":true,"branches":[]}`)
	for _, tt := range []struct {
		raw, want string
	}{
		{"{ \"thought\": 1,\n \"nextThoughtNeeded\": true, \"branches\": [] }", `{"thought":1,"nextThoughtNeeded":true,"branches":[]}`},
		{"", `{"branches":[],"nextThoughtNeeded":true,"thought":1}`},
		{`{"thought":1,`, `{"branches":[],"nextThoughtNeeded":true,"thought":1}`},
		{`{"a":1} {"b":2}`, `{"branches":[],"nextThoughtNeeded":true,"thought":1}`},
	} {
		got, err := results.Flatten(res, &results.Options{Structured: []byte(tt.raw)})
		if err != nil || got != tt.want {
			t.Errorf("Flatten(Structured: %q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	esc := copyResult(t, `{"b":"<x> & y","a":1.5}`)
	if got, _ := results.Flatten(esc, &results.Options{Structured: []byte(`{"b":"\u003cx\u003e \u0026 y","a":1.50}`)}); got != `{"b":"<x> & y","a":1.50}` {
		t.Errorf("escaped strings: Flatten() = %q", got)
	}
	app, _ := results.Flatten(&mcp.CallToolResult{StructuredContent: map[string]any{"a": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "shown"}}},
		&results.Options{App: true, Structured: []byte(`{"a":1}`)})
	if app != "shown" {
		t.Errorf("App tool: Flatten() = %q, want its content only", app)
	}
}

// TestCopyCheckBounds: hostile inputs keep their blocks (or are dropped by the linear whole
// comparisons) without running away.
func TestCopyCheckBounds(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + `"x"` + strings.Repeat(`}`, 200)
	wide := `{"s":[` + strings.TrimSuffix(strings.Repeat(`"aaaaaaaa1",`, 50_000), ",") + `]}`
	tests := []struct {
		name, sc, text string
		dropped        bool
	}{
		{"deep, equal", deep, deep, true},
		{"deep, a deep member", deep, strings.Repeat(`{"a":`, 150) + `"x"` + strings.Repeat(`}`, 150), false},
		{"deep, the string member", deep, "x", false}, // past the index depth: not a member
		{"many brackets", `{"a":"x"}`, strings.Repeat("[", 100_000), false},
		{"many candidates", wide, strings.Repeat("aaaaaaaa2 ", 10_000), false},
		{"huge block, equal to a string", `{"s":"` + strings.Repeat("y", 2<<20) + `"}`, strings.Repeat("y", 2<<20), true},
		{"huge block, not scanned", `{"s":"y"}`, strings.Repeat("y ", 1<<20), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := copyResult(t, tt.sc, tt.text)
			got, err := results.Flatten(res, &results.Options{MaxBytes: -1, Structured: []byte(tt.sc)})
			if err != nil {
				t.Fatal(err)
			}
			if dropped := got == compact(t, tt.sc); dropped != tt.dropped {
				t.Errorf("dropped = %v, want %v", dropped, tt.dropped)
			}
		})
	}
}

// checkNoFactLost fails t when a text block of res that is not in what the model reads
// (text) has a word or number the model does not read: see facts.
func checkNoFactLost(t testing.TB, res *mcp.CallToolResult, text string) {
	t.Helper()
	if lost := lostFacts(res, text); len(lost) > 0 {
		t.Errorf("facts lost: %q\nthe model reads:\n%s", lost, text)
	}
}

// lostFacts returns the facts (words and numbers) of the dropped text blocks of res that
// the model does not read in text.
func lostFacts(res *mcp.CallToolResult, text string) []string {
	reads := newFactSet(text)
	var lost []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || strings.Contains(text, tc.Text) {
			continue // kept (or empty)
		}
		for _, f := range blockFacts(tc.Text) {
			if !reads.has(f) {
				lost = append(lost, f)
			}
		}
	}
	return lost
}

// factSet is what the model reads, as facts: the words and numbers of the text, and of
// every string (key or value) of every JSON line of it, decoded.
type factSet struct {
	words map[string]bool
	nums  map[float64]bool
}

func newFactSet(text string) *factSet {
	s := &factSet{words: map[string]bool{}, nums: map[float64]bool{}}
	s.addText(text)
	for line := range strings.Lines(text) {
		var v any
		if json.Unmarshal([]byte(line), &v) == nil {
			walkJSON(v, s.addText, func(f float64) { s.nums[f] = true })
		}
	}
	return s
}

func (s *factSet) addText(t string) {
	for _, w := range tokens(t) {
		s.words[w] = true
		if f, err := strconv.ParseFloat(w, 64); err == nil {
			s.nums[f] = true
		}
	}
}

func (s *factSet) has(f string) bool {
	if n, err := strconv.ParseFloat(f, 64); err == nil {
		return s.nums[n] || s.words[f]
	}
	return s.words[f]
}

// blockFacts returns the facts of a text block: for a JSON block the words of its strings
// (keys and values, decoded) and its numbers, for any other its words and numbers.
func blockFacts(text string) []string {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return tokens(text)
	}
	var out []string
	walkJSON(v, func(s string) { out = append(out, tokens(s)...) }, func(f float64) {
		out = append(out, strconv.FormatFloat(f, 'g', -1, 64))
	})
	return out
}

func walkJSON(v any, str func(string), num func(float64)) {
	switch v := v.(type) {
	case string:
		str(v)
	case float64:
		num(v)
	case []any:
		for _, e := range v {
			walkJSON(e, str, num)
		}
	case map[string]any:
		for k, e := range v {
			str(k)
			walkJSON(e, str, num)
		}
	}
}

// tokens splits text into lower-case words (runs of letters and digits) and numbers (a leading minus
// when it follows no letter or digit, a decimal point between digits).
func tokens(text string) []string {
	var out []string
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWord(r) {
			i += size
			continue
		}
		start := i
		if start > 0 && text[start-1] == '-' && (start < 2 || !isWordByteTest(text[start-2])) && r >= '0' && r <= '9' {
			start--
		}
		for i < len(text) {
			r, size := utf8.DecodeRuneInString(text[i:])
			if isWord(r) {
				i += size
				continue
			}
			if r == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9' && i > 0 && text[i-1] >= '0' && text[i-1] <= '9' {
				i++
				continue
			}
			break
		}
		out = append(out, strings.ToLower(text[start:i]))
	}
	return out
}

func isWordByteTest(c byte) bool {
	r := rune(c)
	return c >= 0x80 || unicode.IsLetter(r) || unicode.IsDigit(r)
}
