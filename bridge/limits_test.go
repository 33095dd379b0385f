package bridge

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateDoc = flag.Bool("update", false, "rewrite the Limits section of doc.go from limitTable")

// limitsHeading opens the generated section of the package doc; it runs to the next heading
// or the package clause.
const limitsHeading = "// # Limits\n"

const limitsIntro = `Everything a server, a servers file or a token endpoint controls is bounded; past a limit
that server (or that tool, or that file) loses, never the host. Options fields change the
first group (a zero field means the default); the rest are fixed. Generated from limitTable
in limits.go.`

// TestLimitsDocumented checks the package doc's Limits section against limitTable, so the
// documentation cannot drift from the values resolve applies. Run with -update to rewrite it.
func TestLimitsDocumented(t *testing.T) {
	const path = "doc.go"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, limitsHeading)
	if start < 0 {
		t.Fatalf("%s has no %q section", path, strings.TrimSpace(limitsHeading))
	}
	rest := doc[start+len(limitsHeading):]
	end := 0 // the section ends before the next heading or the first line that is not a comment
	for end < len(rest) {
		line, _, _ := strings.Cut(rest[end:], "\n")
		if !strings.HasPrefix(line, "//") || strings.HasPrefix(line, "// # ") {
			break
		}
		end += len(line) + 1
	}
	for strings.HasSuffix(rest[:end], "\n//\n") { // the blank line before the next heading stays
		end -= len("//\n")
	}
	got := rest[:end]
	want := renderLimits()
	if got == want {
		return
	}
	if *updateDoc {
		doc = doc[:start+len(limitsHeading)] + want + rest[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the Limits section of %s differs from limitTable; run `go test -run TestLimitsDocumented -update ./bridge`\n--- have\n%s\n--- want\n%s", path, got, want)
}

// TestLimitsResolved checks that resolve fills every option of limitTable with its default,
// keeps values the caller set, and that every limit-like Options field is in the table.
func TestLimitsResolved(t *testing.T) {
	inTable := map[string]bool{}
	def := reflect.ValueOf(resolve(nil).Options)
	for _, l := range limitTable {
		if l.option == "" {
			if l.fill != nil {
				t.Errorf("%s: fixed limit with a fill", l.name)
			}
			continue
		}
		inTable[l.option] = true
		f := def.FieldByName(l.option)
		if !f.IsValid() {
			t.Errorf("%s: Options has no field %s", l.name, l.option)
			continue
		}
		if f.Int() != l.value {
			t.Errorf("resolve(nil).%s = %d, want %d (%s)", l.option, f.Int(), l.value, l.name)
		}
		// A value the caller set is kept.
		var o Options
		reflect.ValueOf(&o).Elem().FieldByName(l.option).SetInt(l.value + 1)
		if got := reflect.ValueOf(resolve(&o).Options).FieldByName(l.option).Int(); got != l.value+1 {
			t.Errorf("resolve kept %s = %d, want %d", l.option, got, l.value+1)
		}
	}
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if (strings.HasPrefix(name, "Max") || strings.HasSuffix(name, "Timeout")) && !inTable[name] {
			t.Errorf("Options.%s is not in limitTable", name)
		}
	}
}

// renderLimits renders limitTable as the body of the package doc's Limits section.
func renderLimits() string {
	var b strings.Builder
	b.WriteString("//\n")
	writeWrapped(&b, "// ", "// ", limitsIntro)
	b.WriteString("//\n")
	for _, l := range limitTable {
		var item string
		if l.option != "" {
			item = fmt.Sprintf("Options.%s, default %s (%s): %s. Over it: %s.", l.option, formatLimit(l), l.name, l.bounds, l.over)
		} else {
			item = fmt.Sprintf("%s (fixed, %s): %s. Over it: %s.", formatLimit(l), l.name, l.bounds, l.over)
		}
		writeWrapped(&b, "//   - ", "//     ", item)
	}
	return b.String()
}

// formatLimit writes a limit's value for people: 16 MiB, 100,000 bytes, 60s, 1000h.
func formatLimit(l limit) string {
	switch l.unit {
	case unitBytes:
		for _, u := range []struct {
			shift int
			name  string
		}{{20, "MiB"}, {10, "KiB"}} {
			if l.value >= 1<<u.shift && l.value%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d %s", l.value>>u.shift, u.name)
			}
		}
		return groupDigits(l.value) + " bytes"
	case unitDuration:
		d := time.Duration(l.value)
		if d >= time.Hour && d%time.Hour == 0 {
			return fmt.Sprintf("%dh", d/time.Hour)
		}
		if d%time.Second == 0 {
			return fmt.Sprintf("%ds", d/time.Second)
		}
		return d.String()
	}
	return groupDigits(l.value)
}

// groupDigits writes n with a comma between groups of three digits.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// writeWrapped writes text as comment lines of at most 100 columns, the first line after
// first and the others after next.
func writeWrapped(b *strings.Builder, first, next, text string) {
	const width = 100
	line := first
	empty := true
	for w := range strings.FieldsSeq(text) {
		if !empty && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line, empty = next, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
}
