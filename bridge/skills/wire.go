// Package skills is the client side of the MCP Skills extension (SEP-2640, extension
// io.modelcontextprotocol/skills, specification/stable/skills.mdx of
// modelcontextprotocol/ext-skills): discovering a server's skills with skills/list (and
// skill:// resources where a server has no skills/list), reading a skill's SKILL.md and
// supporting files with resources/read, and verifying every byte against the skill's entry
// (digest, size, frontmatter, naming rules) before anything reaches a host or a model.
//
// It knows no bridge type: a Conn carries its requests, and the caller names, bounds and
// retries them. Listing fetches metadata only; no skill file is read before Load or ReadFile
// asks for it. What a server sends is untrusted: every text that leaves this package has
// its UTF-8 repaired, control and bidirectional characters escaped, and is wrapped in a
// block the server cannot close (Wrap).
package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The wire names (specification: "Capabilities", "Methods").
const (
	// Extension is the extension's ID in capabilities.extensions.
	Extension = "io.modelcontextprotocol/skills"
	// MethodList enumerates a server's skills (paginated: cursor, nextCursor).
	MethodList = "skills/list"
	// MethodGet returns one skill's entry by the URI of its SKILL.md.
	MethodGet = "skills/get"
	// SkillFile is the name of a skill's root file.
	SkillFile = "SKILL.md"
	// Scheme is the conventional URI scheme of skill resources.
	Scheme = "skill://"
	// Dynamic is the resources value of an entry whose files are not enumerated.
	Dynamic = "dynamic"
)

// The limits (the bridge's limits table has a row for each).
const (
	// MaxSkillsPerServer bounds the skills one server's listing may hold, all pages.
	MaxSkillsPerServer = 1000
	// MaxFilesPerSkill bounds the files of one skill's manifest (the specification's
	// publication limit is 512).
	MaxFilesPerSkill = 512
	// MaxFileBytes bounds one skill file read (SKILL.md or a supporting file), and
	// MaxSkillBytes the manifest's sizes summed: the specification's per-skill limit
	// ("Limits": hosts must support 16 MiB), which a model's text is then cut far below
	// (the bridge's MaxResultBytes).
	MaxFileBytes  = 16 << 20
	MaxSkillBytes = 16 << 20
	// MaxListPages bounds the skills/list pages of one listing.
	MaxListPages = 100
	// MaxFrontmatterBytes bounds a SKILL.md's YAML frontmatter and an entry's frontmatter.
	MaxFrontmatterBytes = 16 << 10
	// MaxDescriptionBytes is the Agent Skills bound on a description (1024 characters).
	MaxDescriptionBytes = 1024
	// DefaultIndexTokens caps the skill index (Index) when the caller gives no cap.
	DefaultIndexTokens = 2000
)

// Conn is what the package needs of a session: one request by method with params, answered
// with the result's bytes as the server sent them, and resources/read. The caller bounds
// and retries them (the bridge's session pool does).
type Conn interface {
	Request(ctx context.Context, method string, params any) (json.RawMessage, error)
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// Params are the params of skills/list (Cursor) and skills/get (URI).
type Params struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// RawResult keeps a result's bytes as the server sent them; go-sdk's custom-method call
// decodes into it (see RegisterMethods).
type RawResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

// UnmarshalJSON keeps a copy of b.
func (r *RawResult) UnmarshalJSON(b []byte) error {
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// RegisterMethods lets client c send skills/list and skills/get (go-sdk knows neither).
func RegisterMethods(c *mcp.Client) error {
	for _, m := range []string{MethodList, MethodGet} {
		if err := mcp.AddSendingCustomMethod[*Params, *RawResult](c, m); err != nil {
			return err
		}
	}
	return nil
}

// Send sends skills/list or skills/get on cs and returns the result's bytes.
func Send(ctx context.Context, cs *mcp.ClientSession, method string, params *Params) (json.RawMessage, error) {
	res, err := mcp.CallCustomMethod[*Params, *RawResult](ctx, cs, method, params)
	if err != nil {
		return nil, err
	}
	return res.Raw, nil
}

// File is one entry of a skill's manifest (specification: "Skill entry", resources): the
// file's resource URI, "sha256:<64 lowercase hex>" of its raw bytes, and their length.
type File struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Skill is one skill's entry (skills/list, skills/get), checked: URI is the SKILL.md's,
// Name (its final path segment, equal to the frontmatter's name) and Description come from
// the frontmatter, Frontmatter is the entry's frontmatter object as sent, and Files its
// manifest, unless Dynamic (no manifest: "dynamic", or a skill:// resource found without
// skills/list), when only the frontmatter can be verified.
type Skill struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Frontmatter json.RawMessage `json:"frontmatter,omitempty"`
	Files       []File          `json:"files,omitempty"`
	Dynamic     bool            `json:"dynamic,omitempty"`
}

// Size is the sum of the manifest's file sizes (0 when Dynamic).
func (s Skill) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Dir is the skill's directory URI, with a trailing slash: its URI without SKILL.md.
func (s Skill) Dir() string { return s.URI[:len(s.URI)-len(SkillFile)] }

// wireEntry is a skill entry as sent.
type wireEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// decodeEntry checks one entry (specification: "Skill entry"): a skill:// URI (or another
// scheme) ending in /SKILL.md whose final path segment is a valid name equal to the
// frontmatter's; a frontmatter object with name and description; resources, a manifest of
// at most MaxFilesPerSkill files (each under the skill's directory, with a well-formed
// digest and a size) that lists SKILL.md itself, or "dynamic".
func decodeEntry(raw json.RawMessage) (Skill, error) {
	var w wireEntry
	if err := json.Unmarshal(raw, &w); err != nil {
		return Skill{}, fmt.Errorf("entry is not a skill object: %w", err)
	}
	sk := Skill{URI: w.URI}
	name, err := nameOfURI(w.URI)
	if err != nil {
		return sk, err
	}
	if len(w.Frontmatter) > MaxFrontmatterBytes {
		return sk, fmt.Errorf("%w: frontmatter is %d bytes, over %d", ErrLimit, len(w.Frontmatter), MaxFrontmatterBytes)
	}
	fm, err := frontmatterObject(w.Frontmatter)
	if err != nil {
		return sk, err
	}
	sk.Frontmatter = append(json.RawMessage(nil), w.Frontmatter...)
	if sk.Name, sk.Description, err = checkFrontmatter(fm); err != nil {
		return sk, err
	}
	sk.Description = Clean(sk.Description) // the server's words: control and bidi characters escaped
	if sk.Name != name {
		return sk, fmt.Errorf("%w: the URI's final segment %q is not the frontmatter name %q", ErrFrontmatter, name, sk.Name)
	}
	res := bytes.TrimSpace(w.Resources)
	if string(res) == `"`+Dynamic+`"` {
		sk.Dynamic = true
		return sk, nil
	}
	var files []File
	if err := json.Unmarshal(res, &files); err != nil || len(res) == 0 || res[0] != '[' {
		return sk, fmt.Errorf("resources is neither a manifest nor %q", Dynamic)
	}
	if len(files) > MaxFilesPerSkill {
		return sk, fmt.Errorf("%w: manifest lists %d files, over %d", ErrLimit, len(files), MaxFilesPerSkill)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if !isDigest(f.Digest) {
			return sk, fmt.Errorf("file %s: digest %s is not sha256:<64 hex>", quote(f.URI), quote(f.Digest))
		}
		if f.Size < 0 {
			return sk, fmt.Errorf("file %s: negative size", quote(f.URI))
		}
		if _, err := relOf(sk, f.URI); err != nil {
			return sk, fmt.Errorf("file %s: %w", quote(f.URI), err)
		}
		if seen[f.URI] {
			return sk, fmt.Errorf("file %s listed twice", quote(f.URI))
		}
		seen[f.URI] = true
	}
	if !seen[sk.URI] {
		return sk, fmt.Errorf("manifest does not list %s", SkillFile)
	}
	sk.Files = files
	return sk, nil
}

// isDigest reports whether d is "sha256:" and 64 lowercase hex digits.
func isDigest(d string) bool {
	const p = "sha256:"
	if len(d) != len(p)+64 || d[:len(p)] != p {
		return false
	}
	for _, c := range d[len(p):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// The kinds of failure; every error of this package wraps one and names server, skill
// and file (*Error).
var (
	// ErrDigest: a file's bytes do not have the manifest's digest.
	ErrDigest = errors.New("digest mismatch")
	// ErrSize: a file's length is not the manifest's size.
	ErrSize = errors.New("size mismatch")
	// ErrFrontmatter: SKILL.md's frontmatter is missing, malformed, breaks the naming rules
	// or differs from the entry's.
	ErrFrontmatter = errors.New("frontmatter invalid")
	// ErrPath: a relative path would leave the skill, or names no file of its manifest.
	ErrPath = errors.New("path refused")
	// ErrLimit: over one of this package's limits.
	ErrLimit = errors.New("over a skills limit")
	// ErrUnknown: no such skill on the server.
	ErrUnknown = errors.New("unknown skill")
)

// Error is a failure about one skill of one server: Phase is "skills/list", "skills/get",
// "load" or "read"; File the file's path in the skill ("" for none).
type Error struct {
	Server, Phase, Skill, File string
	Err                        error
}

// Error reads "skills: server "x" load skill "y" file "SKILL.md": digest mismatch: ...".
func (e *Error) Error() string {
	s := fmt.Sprintf("skills: server %q %s", e.Server, e.Phase)
	if e.Skill != "" {
		s += " skill " + quote(e.Skill)
	}
	if e.File != "" {
		s += " file " + quote(e.File)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// SessionConn is a Conn over a go-sdk client session whose client had RegisterMethods; for
// hosts that hold a session of their own (the bridge's Server.Skills needs none).
func SessionConn(cs *mcp.ClientSession) Conn { return sessionConn{cs} }

type sessionConn struct{ cs *mcp.ClientSession }

func (c sessionConn) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, _ := params.(*Params)
	return Send(ctx, c.cs, method, p)
}

func (c sessionConn) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}
