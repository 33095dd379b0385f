package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ttalk/mcpbridge/internal/redact"
	"go.yaml.in/yaml/v3"
)

// transportTypes maps every accepted type spelling (lower case) to ServerConfig.Type.
var transportTypes = map[string]string{
	"stdio": TypeStdio, "local": TypeStdio,
	"http": TypeHTTP, "streamable-http": TypeHTTP, "streamable_http": TypeHTTP,
	"streamablehttp": TypeHTTP, "streamable": TypeHTTP, "remote": TypeHTTP,
	"sse": TypeSSE, "auto": "",
}

func (p *parser) serverType(s *serverState, k, v *yaml.Node) {
	str, ok := p.scalar(s, v, k.Value)
	if !ok {
		return
	}
	t, known := transportTypes[strings.ToLower(str)]
	switch {
	case known:
		s.sc.Type = t
	case str == "builtin" || str == "inprocess":
		s.skip = fmt.Sprintf("%s %q is an in-process server of another client", k.Value, str)
	default:
		p.errorf(v, "server %q: unknown %s %q (want stdio, http or sse)", s.id, k.Value, str)
	}
}

func (p *parser) command(s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n != nil && n.Kind == yaml.SequenceNode {
		items := p.stringItems(s, n, "command")
		if len(items) == 0 {
			p.errorf(v, "server %q: command list is empty", s.id)
			return
		}
		s.cmdList = true
		s.sc.Command = items[0].s
		s.fields = append(s.fields, pending{items[0].n, "command", items[0].s, func(v string) { s.sc.Command = v }})
		p.setArgs(s, items[1:])
		return
	}
	if isNull(n) {
		p.errorf(v, "server %q: command is empty", s.id)
		return
	}
	p.stringField(s, k, v, "command", &s.sc.Command, true)
}

func (p *parser) args(s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(v, "server %q: args must be a list", s.id)
		return
	}
	if s.cmdList {
		p.errorf(k, "server %q: give arguments either in the command list or in args, not both", s.id)
		return
	}
	p.setArgs(s, p.stringItems(s, n, "args"))
}

// setArgs stores args and queues them for expansion.
func (p *parser) setArgs(s *serverState, items []item) {
	for _, it := range items {
		i := len(s.sc.Args)
		s.sc.Args = append(s.sc.Args, it.s)
		s.fields = append(s.fields, pending{it.n, fmt.Sprintf("args[%d]", i), it.s, func(v string) { s.sc.Args[i] = v }})
	}
}

// item is one list element, stringified.
type item struct {
	n *yaml.Node
	s string
}

func (p *parser) stringItems(s *serverState, n *yaml.Node, field string) []item {
	out := make([]item, 0, len(n.Content))
	for i, c := range n.Content {
		c = deref(c)
		if !p.spend(c) {
			return nil
		}
		if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
			p.errorf(n.Content[i], "server %q: %s[%d] must be a string", s.id, field, i)
			continue
		}
		out = append(out, item{c, c.Value})
	}
	return out
}

// scalar returns the text of a non-null scalar (numbers and booleans included).
func (p *parser) scalar(s *serverState, v *yaml.Node, field string) (string, bool) {
	n := deref(v)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(v, "server %q: %s must be a string", s.id, field)
		return "", false
	}
	return n.Value, true
}

// stringField sets *dst from a scalar and, when expandable, queues it for expansion.
func (p *parser) stringField(s *serverState, k, v *yaml.Node, field string, dst *string, expandable bool) {
	str, ok := p.scalar(s, v, k.Value)
	if !ok {
		return
	}
	*dst = str
	if expandable {
		s.fields = append(s.fields, pending{deref(v), field, str, func(v string) { *dst = v }})
	}
}

func (p *parser) boolean(s *serverState, k, v *yaml.Node) (bool, bool) {
	n := deref(v)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		b, err := strconv.ParseBool(n.Value)
		if err == nil {
			return b, true
		}
	}
	p.errorf(v, "server %q: %s must be true or false", s.id, k.Value)
	return false, false
}

// stringMap reads an env map: keys are names, values any non-null scalar (stringified).
// check, when not nil, is called for each well-formed key.
func (p *parser) stringMap(s *serverState, k, v *yaml.Node, field string, check func(kv)) map[string]string {
	n := deref(v)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(v, "server %q: %s must be a map", s.id, k.Value)
		return nil
	}
	pairs := p.pairs(n, "key")
	out := make(map[string]string, len(pairs))
	for _, e := range pairs {
		if e.key == "" || strings.ContainsAny(e.key, "=\x00") {
			p.errorf(e.k, "server %q: %s: invalid name %q", s.id, field, e.key)
			continue
		}
		if check != nil {
			check(e)
		}
		val := deref(e.v)
		if val == nil || val.Kind != yaml.ScalarNode {
			p.errorf(e.v, "server %q: %s.%s must be a string", s.id, field, e.key)
			continue
		}
		str := val.Value
		if isNull(val) {
			str = ""
		}
		out[e.key] = str
		key := e.key
		s.fields = append(s.fields, pending{val, field + "." + key, str, func(v string) { out[key] = v }})
	}
	return out
}

// headers reads a headers map or a list of "Name: value" strings.
func (p *parser) headers(s *serverState, k, v *yaml.Node) map[string]string {
	n := deref(v)
	if n != nil && n.Kind == yaml.MappingNode {
		seen := map[string]string{}
		h := p.stringMap(s, k, v, "headers", func(e kv) {
			if !redact.IsHeaderName(e.key) {
				p.errorf(e.k, "server %q: headers: invalid header name %q", s.id, e.key)
			}
			lower := strings.ToLower(e.key)
			if first, dup := seen[lower]; dup {
				p.errorf(e.k, "server %q: headers %q and %q are the same header", s.id, first, e.key)
			}
			seen[lower] = e.key
		})
		return h
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(v, "server %q: headers must be a map or a list of \"Name: value\" strings", s.id)
		return nil
	}
	out := make(map[string]string, len(n.Content))
	lines := map[string]int{}
	for i, c := range n.Content {
		c = deref(c)
		if !p.spend(c) {
			return nil
		}
		if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
			p.errorf(n.Content[i], "server %q: headers[%d] must be a \"Name: value\" string", s.id, i)
			continue
		}
		name, val, ok := strings.Cut(c.Value, ":")
		name = strings.TrimSpace(name)
		if !ok || !redact.IsHeaderName(name) {
			p.errorf(c, "server %q: headers[%d] must be a \"Name: value\" string", s.id, i)
			continue
		}
		if line, dup := lines[strings.ToLower(name)]; dup {
			p.errorf(c, "server %q: header %q given twice (first at line %d)", s.id, name, line)
			continue
		}
		lines[strings.ToLower(name)] = c.Line
		val = strings.TrimSpace(val)
		out[name] = val
		s.fields = append(s.fields, pending{c, "headers." + name, val, func(v string) { out[name] = v }})
	}
	return out
}

func (p *parser) tools(s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(v, "server %q: tools must be a map with include and/or exclude", s.id)
		return
	}
	for _, e := range p.pairs(n, "key") {
		switch e.key {
		case "include":
			if p.claim(s, slotInclude, e.k) {
				s.sc.Include = p.globs(s, e.v, "tools.include")
			}
		case "exclude":
			if p.claim(s, slotExclude, e.k) {
				s.sc.Exclude = p.globs(s, e.v, "tools.exclude")
			}
		default:
			p.errorf(e.k, "server %q: unknown key %q in tools (want include or exclude)", s.id, e.key)
		}
	}
}

// globs reads a list of path.Match patterns (a single string is a list of one).
func (p *parser) globs(s *serverState, v *yaml.Node, field string) []string {
	n := deref(v)
	var items []item
	switch {
	case n != nil && n.Kind == yaml.SequenceNode:
		items = p.stringItems(s, n, field)
	case n != nil && n.Kind == yaml.ScalarNode && !isNull(n):
		items = []item{{n, n.Value}}
	default:
		p.errorf(v, "server %q: %s must be a list of tool name patterns", s.id, field)
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if err := checkPattern(it.s); err != nil {
			p.errorf(it.n, "server %q: %s: bad pattern %q: %w", s.id, field, it.s, err)
			continue
		}
		out = append(out, it.s)
	}
	return out
}

// stringList reads a list of strings outside a server (mcp.allowed).
func (p *parser) stringList(v *yaml.Node, field string) []string {
	n := deref(v)
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(v, "%s must be a list of server names", field)
		return nil
	}
	var out []string
	for _, c := range n.Content {
		c = deref(c)
		if !p.spend(c) {
			return nil
		}
		if c == nil || c.Kind != yaml.ScalarNode {
			p.errorf(n, "%s must be a list of server names", field)
			return nil
		}
		out = append(out, c.Value)
	}
	return out
}

// expose reads a server's expose list: "resources" and/or "prompts".
func (p *parser) expose(s *serverState, v *yaml.Node) []string {
	n := deref(v)
	var items []item
	switch {
	case n != nil && n.Kind == yaml.SequenceNode:
		items = p.stringItems(s, n, "expose")
	case n != nil && n.Kind == yaml.ScalarNode && !isNull(n):
		items = []item{{n, n.Value}}
	default:
		p.errorf(v, "server %q: expose must be a list of %q and %q", s.id, ExposeResources, ExposePrompts)
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if err := checkExpose(it.s); err != nil {
			p.errorf(it.n, "server %q: %w", s.id, err)
			continue
		}
		if !slices.Contains(out, it.s) {
			out = append(out, it.s)
		}
	}
	return out
}
