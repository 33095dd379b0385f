package bridge_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is a front page of compiled code: every ```go block in it is preceded by a
// marker <!-- code: PATH FUNC --> and is the body of that function (an Example that CI
// compiles and runs, or a function a test runs), byte for byte after removing one level of
// indentation. PATH is relative to the repository root and may be in another module.
func TestREADMEBlocksAreExamples(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile(`<!-- code: (\S+) (\S+) -->\n` + "```go\n")
	blocks := 0
	for i := 0; ; {
		j := bytes.Index(readme[i:], []byte("```go\n"))
		if j < 0 {
			break
		}
		start := i + j
		end := bytes.Index(readme[start+6:], []byte("\n```\n"))
		if end < 0 {
			t.Fatalf("README.md: unterminated ```go block at byte %d", start)
		}
		block := string(readme[start+6 : start+6+end+1])
		i = start + 6 + end
		blocks++
		line := 1 + bytes.Count(readme[:start], []byte("\n"))
		// The marker is the line right before the block.
		prev := readme[:start]
		k := bytes.LastIndex(prev[:max(len(prev)-1, 0)], []byte("\n"))
		m := marker.FindSubmatch(readme[k+1 : start+6])
		if m == nil {
			t.Errorf("README.md:%d: a ```go block without a <!-- code: PATH FUNC --> line before it", line)
			continue
		}
		path, fn := string(m[1]), string(m[2])
		body, err := funcBody(filepath.Join("..", filepath.FromSlash(path)), fn)
		if err != nil {
			t.Errorf("README.md:%d: %v", line, err)
			continue
		}
		if body != block {
			t.Errorf("README.md:%d: the block is not the body of %s in %s; the body is:\n%s", line, fn, path, body)
		}
	}
	if blocks < 3 {
		t.Errorf("README.md has %d ```go blocks; the test looks for them as ```go lines", blocks)
	}
}

// funcBody returns the statements of the top-level function name in the Go file at path,
// one tab of indentation removed, ending in a newline.
func funcBody(path, name string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != name || fd.Body == nil {
			continue
		}
		lb := fset.Position(fd.Body.Lbrace).Offset
		rb := fset.Position(fd.Body.Rbrace).Offset
		inner := strings.TrimPrefix(string(src[lb+1:rb]), "\n")
		var b strings.Builder
		for l := range strings.Lines(inner) {
			b.WriteString(strings.TrimPrefix(l, "\t"))
		}
		return b.String(), nil
	}
	return "", os.ErrNotExist
}
