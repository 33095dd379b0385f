package config

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// serverMapKeys are the top-level keys that hold the servers map.
var serverMapKeys = []string{"servers", "mcpServers", "mcp_servers"}

// file walks the document.
func (p *parser) file(root *yaml.Node, cf *parsed) {
	if root.Kind == 0 || len(root.Content) == 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: empty file: want a \"servers\" or \"mcpServers\" map", p.name))
		return
	}
	top := deref(root.Content[0])
	if top == nil || top.Kind != yaml.MappingNode {
		p.errorf(root.Content[0], "want a map with a \"servers\" or \"mcpServers\" key at the top level")
		return
	}
	var (
		serversKey, serversVal *yaml.Node
		mcp                    *yaml.Node
	)
	for _, e := range p.pairs(top, "top-level key") {
		switch e.key {
		case "servers", "mcpServers", "mcp_servers":
			if serversKey != nil {
				p.errorf(e.k, "both %q (line %d) and %q hold servers; keep one", serversKey.Value, serversKey.Line, e.key)
				continue
			}
			serversKey, serversVal = e.k, e.v
		case "mcp":
			mcp = e.v
		}
	}
	var sel *selection
	if m := deref(mcp); m != nil && m.Kind == yaml.MappingNode {
		for _, e := range p.pairs(m, "key") {
			switch e.key {
			case "servers":
				if serversKey == nil {
					serversKey, serversVal = e.k, e.v // VS Code user settings: "mcp": {"servers": ...}
				}
			case "allowed", "excluded":
				if sel == nil {
					sel = &selection{}
				}
				ids := p.stringList(e.v, "mcp."+e.key)
				for _, id := range ids {
					if e.key == "allowed" {
						sel.allowed = append(sel.allowed, id)
					} else {
						sel.excluded = append(sel.excluded, id)
					}
				}
			}
		}
	}
	if serversKey == nil {
		p.errorf(top, "no \"servers\" or \"mcpServers\" map%s", p.topHint(top))
		return
	}
	p.servers(serversKey, serversVal, sel, cf)
}

// topHint suggests a top-level key the user may have misspelt.
func (p *parser) topHint(top *yaml.Node) string {
	for i := 0; i < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if s := nearest(k.Value, serverMapKeys); s != "" {
			return fmt.Sprintf(" (line %d has %q: did you mean %q?)", k.Line, k.Value, s)
		}
	}
	return ""
}

// selection is Gemini's mcp.allowed / mcp.excluded.
type selection struct{ allowed, excluded []string }

func (s *selection) skips(id string) bool {
	if s == nil {
		return false
	}
	if slices.Contains(s.excluded, id) {
		return true
	}
	return len(s.allowed) > 0 && !slices.Contains(s.allowed, id)
}

func (p *parser) servers(key, val *yaml.Node, sel *selection, cf *parsed) {
	m := deref(val)
	if isNull(m) {
		p.warnf(key, "%q is empty: no servers", key.Value)
		return
	}
	if m.Kind != yaml.MappingNode {
		p.errorf(val, "%q must be a map of server name to settings", key.Value)
		return
	}
	ids := map[string]bool{}
	for _, e := range p.pairs(m, "server") {
		ids[e.key] = true
		if e.key == "" {
			p.errorf(e.k, "server names must not be empty")
			continue
		}
		if sel.skips(e.key) {
			continue
		}
		if sc, ok := p.server(e.key, e.k, e.v); ok {
			cf.Servers = append(cf.Servers, sc)
		}
	}
	if sel != nil {
		for _, id := range append(append([]string(nil), sel.allowed...), sel.excluded...) {
			if !ids[id] {
				p.warnf(key, "mcp.allowed/excluded names %q, which is not a server here", id)
			}
		}
	}
}
