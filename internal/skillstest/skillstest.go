// Package skillstest is a go-sdk MCP server that serves skills (the Skills extension,
// SEP-2640): skills/list (paged), skills/get and every file as a skill:// resource, with
// knobs that make it hostile (a wrong digest or size in the manifest, a file changed after
// listing, a declared size it does not have). Tests of bridge/skills, bridge and the CLI
// use it; it is test support, not a skills server for production.
package skillstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skill is one served skill: Path is the <skill-path> (its last segment the name), Files
// its files by relative path (SKILL.md among them), Frontmatter the entry's frontmatter
// (nil: name and description read from SKILL.md's first lines "name: " and
// "description: ").
type Skill struct {
	Path        string
	Files       map[string]string
	Frontmatter map[string]any
	// Manifest, when set, edits the entry's manifest before it is sent (a wrong digest, a
	// wrong size, an extra file).
	Manifest func(files []map[string]any) []map[string]any
}

// Server serves Skills. Set Resources only to serve them as plain resources without the
// extension (an older server); PageSize bounds a skills/list page (0: 100).
type Server struct {
	mu        sync.Mutex
	skills    []Skill
	Resources bool
	PageSize  int
	reads     []string
	// Served, when set, replaces what resources/read returns for uri (tampering after
	// listing).
	Served func(uri, content string) string
}

// New returns a Server for skills.
func New(skills ...Skill) *Server { return &Server{skills: skills} }

// Reads returns the URIs resources/read was asked for, in order.
func (s *Server) Reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reads...)
}

// SetFile changes a file after listing.
func (s *Server) SetFile(skill, rel, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sk := range s.skills {
		if sk.Path == skill {
			sk.Files[rel] = content
		}
	}
}

// Digest is "sha256:<hex>" of content.
func Digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (sk Skill) uri(rel string) string { return "skill://" + sk.Path + "/" + rel }

// entry is sk's skill entry.
func (sk Skill) entry() map[string]any {
	fm := sk.Frontmatter
	if fm == nil {
		fm = map[string]any{}
		for line := range strings.SplitSeq(sk.Files["SKILL.md"], "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok && (k == "name" || k == "description") {
				fm[k] = v
			}
		}
	}
	rels := make([]string, 0, len(sk.Files))
	for rel := range sk.Files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	files := []map[string]any{}
	for _, rel := range rels {
		files = append(files, map[string]any{"uri": sk.uri(rel), "digest": Digest(sk.Files[rel]), "size": len(sk.Files[rel])})
	}
	if sk.Manifest != nil {
		files = sk.Manifest(files)
	}
	return map[string]any{"uri": sk.uri("SKILL.md"), "frontmatter": fm, "resources": files}
}

type params struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

type result struct {
	mcp.ResultBase
	Skills     []map[string]any `json:"skills,omitempty"`
	Skill      map[string]any   `json:"skill,omitempty"`
	NextCursor string           `json:"nextCursor,omitempty"`
	TTLMs      int              `json:"ttlMs"`
	CacheScope string           `json:"cacheScope"`
}

// MCPServer returns a go-sdk server serving s, with one tool ("ping").
func (s *Server) MCPServer() *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}, Tools: &mcp.ToolCapabilities{}}
	if !s.Resources {
		caps.Extensions = map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "skills-fixture", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answers pong."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	s.mu.Lock()
	for _, sk := range s.skills {
		for rel := range sk.Files {
			uri := sk.uri(rel)
			r := &mcp.Resource{URI: uri, Name: rel, MIMEType: "text/markdown"}
			if rel == "SKILL.md" {
				r.Name, _ = sk.entry()["frontmatter"].(map[string]any)["name"].(string)
				r.Description, _ = sk.entry()["frontmatter"].(map[string]any)["description"].(string)
			}
			srv.AddResource(r, s.read)
		}
	}
	s.mu.Unlock()
	if s.Resources {
		return srv
	}
	_ = mcp.AddReceivingCustomMethod(srv, "skills/list", func(_ context.Context, _ *mcp.ServerSession, p *params) (*result, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		size := s.PageSize
		if size <= 0 {
			size = 100
		}
		start, _ := strconv.Atoi(p.Cursor)
		res := &result{CacheScope: "private", Skills: []map[string]any{}}
		for i := start; i < len(s.skills) && i < start+size; i++ {
			res.Skills = append(res.Skills, s.skills[i].entry())
		}
		if start+size < len(s.skills) {
			res.NextCursor = strconv.Itoa(start + size)
		}
		return res, nil
	})
	_ = mcp.AddReceivingCustomMethod(srv, "skills/get", func(_ context.Context, _ *mcp.ServerSession, p *params) (*result, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, sk := range s.skills {
			if sk.uri("SKILL.md") == p.URI {
				return &result{CacheScope: "private", Skill: sk.entry()}, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such skill"}
	})
	return srv
}

// read serves one file.
func (s *Server) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	s.mu.Lock()
	s.reads = append(s.reads, uri)
	var content string
	found := false
	for _, sk := range s.skills {
		for rel, c := range sk.Files {
			if sk.uri(rel) == uri {
				content, found = c, true
			}
		}
	}
	served := s.Served
	s.mu.Unlock()
	if !found {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if served != nil {
		content = served(uri, content)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: content}}}, nil
}

// SkillMD is a SKILL.md with name and description and body.
func SkillMD(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n\n%s", name, description, body)
}

// Many returns n skills named s0, s1, ...
func Many(n int) []Skill {
	out := make([]Skill, n)
	for i := range out {
		name := "s" + strconv.Itoa(i)
		out[i] = Skill{Path: name, Files: map[string]string{"SKILL.md": SkillMD(name, "Skill number "+strconv.Itoa(i)+".", "Body.\n")}}
	}
	return out
}
