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
const limitsHeading = "// Limits.\n"

// TestLimitsDocumented checks the list of limits in limits.go against limitTable: one item
// per row, in the table's order, each opening with the row's value and name ("Options.X,
// default V (Name): " or "V (fixed, Name): ", the values formatted from the table) and going
// on with what the limit bounds and what happens past it, words written there and nowhere
// else. Run with -update to rewrite the openings (a value changed) and the wrapping; a row
// with no item makes it fail until one is written.
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
	var lines []string // the comment's lines, up to the first that is not a comment
	end := 0
	for end < len(rest) {
		line, _, _ := strings.Cut(rest[end:], "\n")
		if !strings.HasPrefix(line, "//") {
			break
		}
		lines = append(lines, line)
		end += len(line) + 1
	}
	intro, words, problems := parseLimitItems(lines)
	for _, p := range problems {
		t.Errorf("%s: %s", path, p)
	}
	var b strings.Builder
	b.WriteString(intro)
	for _, l := range limitTable {
		w, ok := words[l.name]
		if !ok {
			t.Errorf("%s: limit %s has no item; write %q with what it bounds and what happens past it", path, l.name, "//   - "+limitHead(l)+": ")
			continue
		}
		delete(words, l.name)
		writeWrapped(&b, "//   - ", "//     ", limitHead(l)+": "+w)
	}
	for name := range words {
		t.Errorf("%s: an item names %s, which is no row of limitTable", path, name)
	}
	got, want := rest[:end], b.String()
	if got == want || t.Failed() {
		return
	}
	if *updateDoc {
		doc = doc[:start+len(limitsHeading)] + want + rest[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the list of limits in %s differs from limitTable's values or order; run `go test -run TestLimitsDocumented -update ./bridge`\n--- have\n%s\n--- want\n%s", path, got, want)
}

// parseLimitItems splits the comment lines of the list of limits into the text before the
// first item (kept as it is) and each item's words after its opening, by the limit it names.
func parseLimitItems(lines []string) (intro string, words map[string]string, problems []string) {
	words = map[string]string{}
	var items []string
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "//   - "):
			items = append(items, strings.TrimPrefix(line, "//   - "))
		case len(items) > 0 && strings.HasPrefix(line, "//     "):
			items[len(items)-1] += " " + strings.TrimPrefix(line, "//     ")
		case len(items) > 0:
			problems = append(problems, fmt.Sprintf("line %d of the list of limits is neither an item nor its continuation: %q", i+1, line))
		default:
			intro += line + "\n"
		}
	}
	for _, item := range items {
		head, w, ok := strings.Cut(item, "): ")
		open := strings.LastIndex(head, " (")
		if !ok || open < 0 || strings.TrimSpace(w) == "" {
			problems = append(problems, fmt.Sprintf("an item does not read \"<value> (fixed, <name>): <words>\" or \"Options.<field>, default <value> (<name>): <words>\": %q", item))
			continue
		}
		name := strings.TrimPrefix(head[open+2:], "fixed, ")
		if _, dup := words[name]; dup {
			problems = append(problems, fmt.Sprintf("two items name %s", name))
		}
		words[name] = w
	}
	return intro, words, problems
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
			// UserOptions are filled in resolve's copy of them (options.users).
			f := reflect.ValueOf(resolve(nil).users).FieldByName(field)
			if !f.IsValid() || f.Kind() != reflect.Int && f.Kind() != reflect.Int64 {
				t.Errorf("%s: UserOptions has no integer field %s", l.name, field)
				continue
			}
			userFields[field] = true
			if f.Int() != l.value {
				t.Errorf("resolve(nil).users.%s = %d, want %d (%s)", field, f.Int(), l.value, l.name)
			}
			var u UserOptions
			reflect.ValueOf(&u).Elem().FieldByName(field).SetInt(l.value + 1)
			if got := reflect.ValueOf(resolve(&Options{Users: &u}).users).FieldByName(field).Int(); got != l.value+1 {
				t.Errorf("resolve kept Users.%s = %d, want %d", field, got, l.value+1)
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
	utyp := reflect.TypeFor[UserOptions]()
	for i := range utyp.NumField() {
		f := utyp.Field(i)
		if (f.Type.Kind() == reflect.Int || f.Type.Kind() == reflect.Int64) && !userFields[f.Name] {
			t.Errorf("UserOptions.%s is not in limitTable", f.Name)
		}
	}
}

// limitHead is how the list of limits opens l's item: its option or "fixed", its value
// and its constant.
func limitHead(l limit) string {
	if l.option != "" {
		return fmt.Sprintf("Options.%s, default %s (%s)", l.option, formatLimit(l), l.name)
	}
	return fmt.Sprintf("%s (fixed, %s)", formatLimit(l), l.name)
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
