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

var updateDoc = flag.Bool("update", false, "rewrite the generated list of limits in limits.go from limitTable")

// limitsHeading opens the generated list: the doc comment of the first const group of
// limits.go (go doc bridge.DefaultConnectTimeout). It runs to the first line that is not a
// comment.
const limitsHeading = "// Limits: generated from limitTable below by TestLimitsDocumented.\n"

const limitsIntro = `Everything a server, a servers file or a token endpoint controls is bounded; past a limit
that server (or that tool, or that file) loses, never the host. Options and UserOptions
(Options.Users) fields change the first group (a zero field means the default); the rest are
fixed. After changing a row of limitTable, run ` + "`go test -run TestLimitsDocumented -update ./bridge`" + `.`

// TestLimitsDocumented checks the generated list of limits in limits.go against limitTable,
// so the documentation cannot drift from the values resolve applies. Run with -update to
// rewrite it.
func TestLimitsDocumented(t *testing.T) {
	const path = "limits.go"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, limitsHeading)
	if start < 0 {
		t.Fatalf("%s has no %q comment", path, strings.TrimSpace(limitsHeading))
	}
	rest := doc[start+len(limitsHeading):]
	end := 0 // the list ends before the first line that is not a comment
	for end < len(rest) {
		line, _, _ := strings.Cut(rest[end:], "\n")
		if !strings.HasPrefix(line, "//") {
			break
		}
		end += len(line) + 1
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
	t.Errorf("the list of limits in %s differs from limitTable; run `go test -run TestLimitsDocumented -update ./bridge`\n--- have\n%s\n--- want\n%s", path, got, want)
}

// TestLimitsResolved checks that resolve fills every option of limitTable with its default,
// keeps values the caller set, and that every limit-like Options field is in the table.
func TestLimitsResolved(t *testing.T) {
	inTable := map[string]bool{}
	def := reflect.ValueOf(resolve(nil).Options)
	userFields := map[string]bool{}
	for _, l := range limitTable {
		if l.option == "" {
			if l.fill != nil {
				t.Errorf("%s: fixed limit with a fill", l.name)
			}
			continue
		}
		if field, ok := strings.CutPrefix(l.option, "Users."); ok {
			// UserOptions are filled where they are used (zero means the default).
			if f, ok := reflect.TypeFor[UserOptions]().FieldByName(field); !ok || f.Type.Kind() != reflect.Int && f.Type.Kind() != reflect.Int64 {
				t.Errorf("%s: UserOptions has no integer field %s", l.name, field)
			}
			userFields[field] = true
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
	utyp := reflect.TypeFor[UserOptions]()
	for i := range utyp.NumField() {
		f := utyp.Field(i)
		if (f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64) && !userFields[f.Name] {
			t.Errorf("UserOptions.%s is not in limitTable", f.Name)
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
			item = fmt.Sprintf("Options.%s, default %s (%s): %s.", l.option, formatLimit(l), l.name, l.bounds)
		} else {
			item = fmt.Sprintf("%s (fixed, %s): %s.", formatLimit(l), l.name, l.bounds)
		}
		if l.over != "" {
			item += fmt.Sprintf(" Over it: %s.", l.over)
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
		if d > time.Minute && d%time.Minute == 0 {
			return fmt.Sprintf("%d min", d/time.Minute)
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
