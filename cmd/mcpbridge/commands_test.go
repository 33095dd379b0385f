package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCommandTable checks the table itself: unique names, every flag defined on its
// command's FlagSet with a usage string, sane argument counts, documentation present.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "" || seen[c.name] {
				t.Fatalf("command name %q is empty or repeated", c.name)
			}
			seen[c.name] = true
			if c.run == nil || c.summary == "" || !strings.HasSuffix(c.doc, "\n") {
				t.Errorf("run, summary or doc (ending in a newline) missing")
			}
			if c.minArgs < 0 || c.maxArgs < c.minArgs || (c.maxArgs == 0) != (c.args == "") {
				t.Errorf("minArgs %d, maxArgs %d do not fit args %q", c.minArgs, c.maxArgs, c.args)
			}
			fs := newFlagSet(c, &cliFlags{}, &bytes.Buffer{})
			flags := map[string]bool{}
			for _, f := range c.flags {
				if flags[f.name] {
					t.Errorf("flag %q listed twice", f.name)
				}
				flags[f.name] = true
				ff := fs.Lookup(f.name)
				if ff == nil {
					t.Errorf("flag %q not defined: its field has a type newFlagSet does not handle", f.name)
					continue
				}
				if f.usage == "" {
					t.Errorf("flag %q has no usage", f.name)
				}
				if _, isBool := f.field(&cliFlags{}).(*bool); isBool != (f.arg == "") {
					t.Errorf("flag %q: a placeholder (%q) is for flags that take a value, and only those", f.name, f.arg)
				}
			}
			var help bytes.Buffer
			newFlagSet(c, &cliFlags{}, &help).Usage()
			head, _, _ := strings.Cut(help.String(), "\n\n") // the synopsis, wrapped
			if strings.Join(strings.Fields(head), " ") != "Usage: "+c.synopsis() {
				t.Errorf("usage does not start with the synopsis:\n%s", help.String())
			}
			for name := range flags {
				if !strings.Contains(help.String(), "  -"+name) && !strings.Contains(help.String(), "  --"+name) {
					t.Errorf("usage lacks flag -%s:\n%s", name, help.String())
				}
			}
		})
	}
}

// TestHelpListsEveryCommand checks "mcpbridge help" shows every command's synopsis line.
func TestHelpListsEveryCommand(t *testing.T) {
	_, stderr, code := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("help: exit code %d", code)
	}
	for _, l := range synopses() {
		if !strings.Contains(stderr, "  "+l+"\n") {
			t.Errorf("help lacks %q:\n%s", l, stderr)
		}
	}
}

// TestUsageDocs checks that the synopsis blocks in doc.go and README.md are the ones the
// command table produces; go test -update rewrites them.
func TestUsageDocs(t *testing.T) {
	want := synopses()
	docs := []struct {
		path   string
		start  string // the block begins on the line after this one
		end    string // and ends before this line
		prefix string // each synopsis line carries this prefix
	}{
		{path: "doc.go", start: "// Usage:\n//\n", end: "//\n", prefix: "//\t"},
		{path: filepath.Join("..", "..", "README.md"), start: "Usage (generated from the command table):\n\n```\n", end: "```\n"},
	}
	for _, d := range docs {
		t.Run(filepath.Base(d.path), func(t *testing.T) {
			b, err := os.ReadFile(d.path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			i := strings.Index(s, d.start)
			if i < 0 {
				t.Fatalf("%s: no line sequence %q before the synopsis block", d.path, d.start)
			}
			i += len(d.start)
			n := 0
			for n < len(s)-i && !strings.HasPrefix(s[i+n:], d.end) {
				nl := strings.IndexByte(s[i+n:], '\n')
				if nl < 0 {
					t.Fatalf("%s: synopsis block not closed by %q", d.path, d.end)
				}
				n += nl + 1
			}
			var block strings.Builder
			for _, l := range want {
				block.WriteString(d.prefix + l + "\n")
			}
			if s[i:i+n] == block.String() {
				return
			}
			if *update {
				if err := os.WriteFile(d.path, []byte(s[:i]+block.String()+s[i+n:]), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			t.Errorf("%s: synopsis block differs from the command table (go test -update rewrites it)\n--- got\n%s--- want\n%s", d.path, s[i:i+n], block.String())
		})
	}
}

// TestHelpWidth: every line of the CLI's help (the command list, each command's usage and
// flags) and of the README's CLI block is under 100 columns.
func TestHelpWidth(t *testing.T) {
	check := func(what, text string) {
		t.Helper()
		for i, l := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(strings.ReplaceAll(l, "\t", "        ")); n >= 100 {
				t.Errorf("%s line %d is %d columns: %q", what, i+1, n, l)
			}
		}
	}
	check("mcpbridge help", mainUsage())
	for _, c := range commands() {
		var b strings.Builder
		newFlagSet(c, &cliFlags{}, &b).Usage()
		check("mcpbridge help "+c.name, b.String())
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, block, ok := strings.Cut(string(readme), "Usage (generated from the command table):\n\n```\n"); ok {
		block, _, _ = strings.Cut(block, "```\n")
		check("README CLI block", block)
	}
}

func TestWrapWords(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"one two three", 20, []string{"one two three"}},
		{"one two three", 8, []string{"one two", "  three"}},
		{"one two three", 6, []string{"one", "  two", "  three"}},
		{"averyveryverylongword x", 5, []string{"averyveryverylongword", "  x"}},
		{"cmd [--timeout D] [-v]", 14, []string{"cmd", "  [--timeout D]", "  [-v]"}},
	}
	for _, tt := range tests {
		if got := wrapWords(tt.s, tt.width, "  "); !slices.Equal(got, tt.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}
