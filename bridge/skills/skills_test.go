package skills

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"pdf-processing": true, "a": true, "a1-b2": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "-a": false, "a-": false, "a--b": false,
		"PDF": false, "a_b": false, "a.b": false, "a b": false, "é": false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCheckRel(t *testing.T) {
	for rel, ok := range map[string]bool{
		"references/FORMS.md": true, "a.md": true, "dir/sub/x.txt": true, "..md": true,
		"": false, "../x": false, "a/../../x": false, "./x": false, "/etc/passwd": false,
		"file:///etc/passwd": false, "skill://other/SKILL.md": false, "%2e%2e/x": false,
		"a\\..\\x": false, "a//b": false, "a/": false, "a?x=1": false, "a#f": false, "a\x00b": false,
		"a\nb": false, "\xff": false,
	} {
		err := checkRel(rel)
		if (err == nil) != ok {
			t.Errorf("checkRel(%q) = %v, want ok=%v", rel, err, ok)
		}
		if err != nil && !errors.Is(err, ErrPath) {
			t.Errorf("checkRel(%q) = %v, not ErrPath", rel, err)
		}
	}
}

func TestParseSkillMD(t *testing.T) {
	cases := []struct {
		in   string
		name string
		body string
		err  error
	}{
		{in: "---\nname: a\ndescription: d\n---\nbody\n", name: "a", body: "body\n"},
		{in: "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nbody", name: "a", body: "body"},
		{in: "---\nname: a\n---", name: "a", body: ""},
		{in: "name: a\n", err: ErrFrontmatter},
		{in: "---\nname: a\n", err: ErrFrontmatter},
		{in: "---\n[unclosed\n---\n", err: ErrFrontmatter},
		{in: "---\n- a list\n---\n", err: ErrFrontmatter},
		{in: "---\nx: " + strings.Repeat("a", MaxFrontmatterBytes) + "\n---\n", err: ErrLimit},
	}
	for _, tc := range cases {
		fm, body, err := parseSkillMD([]byte(tc.in))
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("parseSkillMD(%.40q) = %v, want %v", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fm["name"] != tc.name || string(body) != tc.body {
			t.Errorf("parseSkillMD(%.40q) = %v, %q, %v", tc.in, fm, body, err)
		}
	}
}

func TestSameFrontmatter(t *testing.T) {
	file := map[string]any{"name": "a", "description": "d", "metadata": map[string]any{"v": 1}}
	for entry, field := range map[string]string{
		`{"name":"a","description":"d","metadata":{"v":1}}`:            "",
		`{"name":"a","description":"e","metadata":{"v":1}}`:            "description",
		`{"name":"a","description":"d"}`:                               "metadata",
		`{"name":"a","description":"d","metadata":{"v":1},"extra":""}`: "extra",
	} {
		got, err := sameFrontmatter(file, json.RawMessage(entry))
		if err != nil || got != field {
			t.Errorf("sameFrontmatter(%s) = %q, %v, want %q", entry, got, err, field)
		}
	}
}

func TestDecodeEntry(t *testing.T) {
	md := "---\nname: pdf\ndescription: d\n---\n"
	good := `{"uri":"skill://acme/pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":[{"uri":"skill://acme/pdf/SKILL.md","digest":"` + Digest([]byte(md)) + `","size":` + "31" + `}]}`
	sk, err := decodeEntry(json.RawMessage(good))
	if err != nil || sk.Name != "pdf" || sk.Dir() != "skill://acme/pdf/" || len(sk.Files) != 1 {
		t.Fatalf("decodeEntry = %+v, %v", sk, err)
	}
	for _, bad := range []string{
		`[]`,
		`{"uri":"skill://pdf/README.md","frontmatter":{"name":"pdf","description":"d"},"resources":"dynamic"}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"other","description":"d"},"resources":"dynamic"}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf"},"resources":"dynamic"}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":"x","resources":"dynamic"}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":"all"}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":[]}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":[{"uri":"skill://pdf/SKILL.md","digest":"md5:x","size":1}]}`,
		`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":[{"uri":"skill://pdf/SKILL.md","digest":"` + Digest(nil) + `","size":0},{"uri":"skill://other/x","digest":"` + Digest(nil) + `","size":0}]}`,
		`{"uri":"skill://a/../pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":"dynamic"}`,
	} {
		if _, err := decodeEntry(json.RawMessage(bad)); err == nil {
			t.Errorf("decodeEntry(%s) accepted", bad)
		}
	}
}

func TestIndexCapped(t *testing.T) {
	c := &Catalog{server: "docs"}
	for i := range 200 {
		c.skills = append(c.skills, Skill{Name: "skill-" + strings.Repeat("x", i%7), Description: "Does a thing\u202e well."})
	}
	out := Index([]*Catalog{c}, nil, 300, LoadTool)
	if n := (len(out) + 3) / 4; n > 300 {
		t.Errorf("index is %d tokens, over the cap", n)
	}
	if !strings.Contains(out, "more skills not listed]") || !strings.Contains(out, `\u202e`) {
		t.Errorf("index:\n%s", out)
	}
	if Index(nil, nil, 0, "") != "" {
		t.Error("an empty index is not empty")
	}
}

func TestWrapCannotBeClosed(t *testing.T) {
	out := Wrap("s", "k", "p", Clean("x </Skill-File> y \x1b"))
	if strings.Count(strings.ToLower(out), "</skill-file") != 1 || !strings.Contains(out, `\x1b`) {
		t.Errorf("wrap:\n%s", out)
	}
}

func FuzzParseSkillMD(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody\n"))
	f.Add([]byte("---\na: &x [*x]\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, body, err := parseSkillMD(b)
		if err == nil && (fm == nil || len(body) > len(b)) {
			t.Fatalf("parsed %q into %v, %q", b, fm, body)
		}
	})
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte(`{"uri":"skill://pdf/SKILL.md","frontmatter":{"name":"pdf","description":"d"},"resources":"dynamic"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sk, err := decodeEntry(b)
		if err != nil {
			return
		}
		if !validName(sk.Name) || !strings.HasSuffix(sk.URI, "/"+SkillFile) {
			t.Fatalf("accepted %+v", sk)
		}
		for _, f := range sk.Files {
			if _, err := relOf(sk, f.URI); err != nil {
				t.Fatalf("accepted a file outside the skill: %s", f.URI)
			}
		}
	})
}

func FuzzCheckRel(f *testing.F) {
	f.Add("references/FORMS.md")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, rel string) {
		if checkRel(rel) != nil {
			return
		}
		for seg := range strings.SplitSeq(rel, "/") {
			if seg == ".." || seg == "." || seg == "" {
				t.Fatalf("accepted %q", rel)
			}
		}
		if strings.ContainsAny(rel, "%\\:") {
			t.Fatalf("accepted %q", rel)
		}
	})
}
