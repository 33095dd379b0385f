package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// quote is s quoted for an error: cut, escaped.
func quote(s string) string { return redact.Quote(s, 200) }

// validName reports whether n follows the Agent Skills naming rules: 1 to 64 characters,
// lowercase letters, digits and hyphens, no leading, trailing or consecutive hyphen.
func validName(n string) bool {
	if n == "" || len(n) > 64 || n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--") {
		return false
	}
	for _, c := range n {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// nameOfURI returns the skill name a SKILL.md URI carries: the segment before /SKILL.md
// (specification: "URI scheme": the final <skill-path> segment is the skill's name).
func nameOfURI(uri string) (string, error) {
	i := strings.Index(uri, "://")
	if i <= 0 || !strings.HasSuffix(uri, "/"+SkillFile) || len(uri) > 2048 || len(uri) < i+3+1+len(SkillFile)+1 {
		return "", fmt.Errorf("uri %s is not <scheme>://<skill-path>/%s", quote(uri), SkillFile)
	}
	segs := strings.Split(uri[i+3:len(uri)-len(SkillFile)-1], "/")
	name := segs[len(segs)-1]
	if !validName(name) {
		return "", fmt.Errorf("%w: uri %s: skill name %s breaks the naming rules (1-64 of a-z 0-9 -, no leading, trailing or double hyphen)", ErrFrontmatter, quote(uri), quote(name))
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "%\\?#") {
			return "", fmt.Errorf("%w: uri %s has an empty, dot or encoded segment", ErrPath, quote(uri))
		}
	}
	return name, nil
}

// frontmatterObject decodes an entry's frontmatter: a JSON object.
func frontmatterObject(raw json.RawMessage) (map[string]any, error) {
	var fm map[string]any
	if err := json.Unmarshal(raw, &fm); err != nil || fm == nil {
		return nil, fmt.Errorf("%w: frontmatter is not an object", ErrFrontmatter)
	}
	return fm, nil
}

// checkFrontmatter checks the required fields (specification: "Skill entry", frontmatter;
// Agent Skills: name and description): a valid name, a description of 1 to
// MaxDescriptionBytes bytes.
func checkFrontmatter(fm map[string]any) (name, desc string, err error) {
	name, _ = fm["name"].(string)
	desc, _ = fm["description"].(string)
	switch {
	case name == "":
		return "", "", fmt.Errorf("%w: frontmatter has no name", ErrFrontmatter)
	case !validName(name):
		return "", "", fmt.Errorf("%w: frontmatter name %s breaks the naming rules (1-64 of a-z 0-9 -, no leading, trailing or double hyphen)", ErrFrontmatter, quote(name))
	case strings.TrimSpace(desc) == "":
		return "", "", fmt.Errorf("%w: frontmatter has no description", ErrFrontmatter)
	case len(desc) > MaxDescriptionBytes:
		return "", "", fmt.Errorf("%w: frontmatter description is %d bytes, over %d", ErrFrontmatter, len(desc), MaxDescriptionBytes)
	}
	return name, desc, nil
}

// parseSkillMD splits a SKILL.md into its YAML frontmatter, decoded, and its body: the file
// begins (after an optional BOM) with a line "---", the YAML, and a line "---".
func parseSkillMD(b []byte) (map[string]any, []byte, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	open := []byte("---\n")
	if bytes.HasPrefix(b, []byte("---\r\n")) {
		open = []byte("---\r\n")
	}
	if !bytes.HasPrefix(b, open) {
		return nil, nil, fmt.Errorf("%w: %s does not begin with a --- frontmatter block", ErrFrontmatter, SkillFile)
	}
	rest := b[len(open):]
	var yml, body []byte
	found := false
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		next := len(rest)
		if end >= 0 {
			line, next = rest[off:off+end], off+end+1
		}
		if strings.TrimRight(string(bytes.TrimSuffix(line, []byte("\r"))), " \t") == "---" {
			yml, body, found = rest[:off], rest[next:], true
			break
		}
		off = next
	}
	if !found {
		return nil, nil, fmt.Errorf("%w: %s's frontmatter block is not closed by ---", ErrFrontmatter, SkillFile)
	}
	if len(yml) > MaxFrontmatterBytes {
		return nil, nil, fmt.Errorf("%w: %s's frontmatter is %d bytes, over %d", ErrLimit, SkillFile, len(yml), MaxFrontmatterBytes)
	}
	var fm map[string]any
	if err := yaml.Unmarshal(yml, &fm); err != nil {
		return nil, nil, fmt.Errorf("%w: %s's frontmatter is not YAML: %v", ErrFrontmatter, SkillFile, redact.Line(err.Error(), 200))
	}
	if fm == nil {
		return nil, nil, fmt.Errorf("%w: %s's frontmatter is not a mapping", ErrFrontmatter, SkillFile)
	}
	return fm, body, nil
}

// sameFrontmatter compares the file's frontmatter with the entry's field by field, as JSON
// values (specification: the entry's frontmatter is identical in content to the file's).
// It returns the first field that differs, "" when none does.
func sameFrontmatter(file map[string]any, entry json.RawMessage) (string, error) {
	fj, err := json.Marshal(file)
	if err != nil {
		return "", fmt.Errorf("%w: %s's frontmatter has values JSON cannot hold", ErrFrontmatter, SkillFile)
	}
	var a, b map[string]any
	if json.Unmarshal(fj, &a) != nil || json.Unmarshal(entry, &b) != nil {
		return "", fmt.Errorf("%w: frontmatter is not an object", ErrFrontmatter)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			b[k] = nil
		}
	}
	for k := range b {
		if !reflect.DeepEqual(a[k], b[k]) {
			return k, nil
		}
	}
	return "", nil
}

// Digest returns "sha256:<hex>" of b, the manifest's digest form.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// verifyBytes checks b against f: the size first (a mismatch is a failure whether or not
// the digest matches), then the digest.
func verifyBytes(f File, b []byte) error {
	if int64(len(b)) != f.Size {
		return fmt.Errorf("%w: read %d bytes, the manifest says %d", ErrSize, len(b), f.Size)
	}
	if got := Digest(b); got != f.Digest {
		return fmt.Errorf("%w: content has %s, the manifest says %s", ErrDigest, got, f.Digest)
	}
	return nil
}

// relOf returns the path of uri inside sk's directory, refusing one outside it.
func relOf(sk Skill, uri string) (string, error) {
	dir := sk.Dir()
	if !strings.HasPrefix(uri, dir) || len(uri) == len(dir) {
		return "", fmt.Errorf("%w: %s is not inside the skill's directory %s", ErrPath, quote(uri), quote(dir))
	}
	rel := uri[len(dir):]
	if err := checkRel(rel); err != nil {
		return "", err
	}
	return rel, nil
}

// checkRel refuses a relative path that could leave a skill or mean something else on
// the server: empty, absolute, a scheme, a backslash, a percent (encoded), a query or
// fragment, an empty, "." or ".." segment, control characters, not UTF-8.
func checkRel(rel string) error {
	switch {
	case rel == "" || len(rel) > 1024:
		return fmt.Errorf("%w: path %s is empty or too long", ErrPath, quote(rel))
	case !utf8.ValidString(rel):
		return fmt.Errorf("%w: path is not UTF-8", ErrPath)
	case strings.HasPrefix(rel, "/") || strings.Contains(rel, ":"):
		return fmt.Errorf("%w: path %s is absolute or has a scheme", ErrPath, quote(rel))
	case strings.ContainsAny(rel, "\\%?#"):
		return fmt.Errorf("%w: path %s has a backslash, an encoded character, a query or a fragment", ErrPath, quote(rel))
	}
	for _, r := range rel {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: path %s has a control character", ErrPath, quote(rel))
		}
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: path %s has an empty, . or .. segment", ErrPath, quote(rel))
		}
	}
	return nil
}

// Resolve returns the URI of the file at relative path rel of sk, refusing a path that
// would leave the skill (see checkRel). For a skill with a manifest the file must be in it.
func Resolve(sk Skill, rel string) (string, error) {
	if err := checkRel(rel); err != nil {
		return "", err
	}
	uri := sk.Dir() + rel
	if u, err := url.Parse(uri); err != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: path %s does not make a plain URI", ErrPath, quote(rel))
	}
	if !sk.Dynamic {
		if _, ok := sk.file(uri); !ok {
			return "", fmt.Errorf("%w: path %s is not in the skill's manifest", ErrPath, quote(rel))
		}
	}
	return uri, nil
}

// file returns the manifest entry of uri.
func (s Skill) file(uri string) (File, bool) {
	for _, f := range s.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return File{}, false
}
