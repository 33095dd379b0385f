package catalog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct{ in, want string }{
		{"read_file", "read_file"},
		{"get-time", "get-time"},
		{"fs.read", "fs_read"},
		{"path/to/tool", "path_to_tool"},
		{"two words", "two_words"},
		{"café", "caf_"},
		{"日本", "__"},
		{"9lives", "_9lives"},
		{"-dash", "_-dash"},
		{"", "_"},
		{long, long[:55] + "_" + shortHash(long)},
		{strings.Repeat("b", 64), strings.Repeat("b", 64)},
		{strings.Repeat("b", 65), strings.Repeat("b", 55) + "_" + shortHash(strings.Repeat("b", 65))},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Sanitize(tt.in)
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !ValidName(got) {
				t.Errorf("result %q is not valid", got)
			}
		})
	}
	// Distinct long names that share a 55-byte prefix stay distinct.
	a, b := Sanitize(long+"x"), Sanitize(long+"y")
	if a == b {
		t.Errorf("long names collapsed to %q", a)
	}
}

func TestNamerAssign(t *testing.T) {
	type call struct{ server, prefix, remote, want, reason string }
	tests := []struct {
		name  string
		calls []call
	}{
		{"no clash keeps names", []call{
			{"a", "", "read", "read", ""},
			{"b", "", "write", "write", ""},
		}},
		{"clash across three servers", []call{
			{"a", "", "search", "search", ""},
			{"b", "", "search", "b__search", "taken"},
			{"c", "", "search", "c__search", "taken"},
		}},
		{"clash between sanitised names", []call{
			{"a", "", "fs.read", "fs_read", "contains '.'"},
			{"a", "", "fs/read", "a__fs_read", "taken"},
			{"b", "", "fs read", "b__fs_read", "taken"},
		}},
		{"still clashing gets a hash suffix", []call{
			{"x", "", "b__t", "b__t", ""},
			{"a", "", "t", "t", ""},
			{"b", "", "t", "b__t_" + shortHash("b\x00t\x000"), "still clashes"},
		}},
		{"always prefix", []call{
			{"fs", "fs", "read", "fs__read", "prefixed"},
			{"db", "db", "read", "db__read", "prefixed"},
		}},
		{"server ID sanitised in prefix", []call{
			{"a", "", "t", "t", ""},
			{"my server", "", "t", "my_server__t", "taken"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNamer()
			for _, c := range tt.calls {
				got, why := n.Assign(c.server, c.prefix, c.remote)
				if got != c.want {
					t.Errorf("assign(%s, %s) = %q, want %q", c.server, c.remote, got, c.want)
				}
				if !strings.Contains(why, c.reason) || (c.reason == "" && why != "") {
					t.Errorf("assign(%s, %s) reason = %q, want it to mention %q", c.server, c.remote, why, c.reason)
				}
				if !ValidName(got) {
					t.Errorf("%q is not a valid name", got)
				}
			}
		})
	}
}

// Names are a function of the configuration and the listings only: assigning in the same
// order always gives the same names.
func TestNamerDeterministic(t *testing.T) {
	run := func() []string {
		n := NewNamer()
		var out []string
		for _, s := range []string{"a", "b", "c"} {
			for _, r := range []string{"x", "x.y", "x_y", strings.Repeat("z", 80)} {
				name, _ := n.Assign(s, "", r)
				out = append(out, name)
			}
		}
		return out
	}
	first := strings.Join(run(), ",")
	for range 5 {
		if got := strings.Join(run(), ","); got != first {
			t.Fatalf("names changed:\n%s\n%s", first, got)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "read_file", "fs.read", "日本語", "9", strings.Repeat("é", 70), "a\x00b", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s)
		if !ValidName(got) || !utf8.ValidString(got) {
			t.Fatalf("Sanitize(%q) = %q: invalid", s, got)
		}
		if ValidName(s) && got != s {
			t.Fatalf("valid name %q changed to %q", s, got)
		}
		if Sanitize(got) != got {
			t.Fatalf("not idempotent: %q -> %q", got, Sanitize(got))
		}
		n := NewNamer()
		a, _ := n.Assign("s1", "", s)
		b, _ := n.Assign("s2", "", s)
		if a == b || !ValidName(a) || !ValidName(b) {
			t.Fatalf("assign gave %q and %q", a, b)
		}
	})
}
