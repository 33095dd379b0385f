package config

import (
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// parser collects the problems of one servers file.
type parser struct {
	name   string
	lookup lookupFunc
	errs   []error
	warns  []string
	budget int
	broke  bool                 // the node budget ran out
	keys   map[string]serverKey // serverKeys() by name
}

func newParser(name string, lookup lookupFunc) *parser {
	return &parser{name: name, lookup: lookup, budget: NodeBudget, keys: keyIndex()}
}

func (p *parser) yamlError(err error) error {
	line, msg, inCollection := yamlSyntaxError(err)
	switch {
	case line == 0:
		return fmt.Errorf("%s: %s", p.name, msg)
	case inCollection:
		return fmt.Errorf("%s:%d: %s (in the list or map that starts here)", p.name, line, msg)
	}
	return fmt.Errorf("%s:%d: %s", p.name, line, msg)
}

func (p *parser) where(n *yaml.Node) string {
	if n == nil || n.Line == 0 {
		return p.name
	}
	return p.name + ":" + strconv.Itoa(n.Line)
}

// errorf records a problem at n. The format may use %w.
func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: "+format, append([]any{p.where(n)}, args...)...))
}

func (p *parser) warnf(n *yaml.Node, format string, args ...any) {
	p.warns = append(p.warns, p.where(n)+": "+fmt.Sprintf(format, args...))
}

func (p *parser) joined() error {
	errs := p.errs
	if len(errs) > MaxErrors {
		more := len(errs) - MaxErrors
		errs = append(errs[:MaxErrors:MaxErrors], fmt.Errorf("%s: and %d more problems", p.name, more))
	}
	return errors.Join(errs...)
}

// spend charges one node to the budget and reports whether parsing may go on.
func (p *parser) spend(n *yaml.Node) bool {
	p.budget--
	if p.budget < 0 {
		if !p.broke {
			p.broke = true
			p.errorf(n, "file too complex (more than %d nodes after aliases)", NodeBudget)
		}
		return false
	}
	return true
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// kv is one key of a mapping, merges applied.
type kv struct {
	key  string
	k, v *yaml.Node
}

// pairs returns the keys of mapping n in order, applying "<<" merge keys (explicit keys win;
// earlier merge sources win over later ones). what names the map's keys in duplicate-key
// messages ("server", "key").
func (p *parser) pairs(n *yaml.Node, what string) []kv {
	return p.pairsDepth(n, what, 0)
}

func (p *parser) pairsDepth(n *yaml.Node, what string, depth int) []kv {
	if depth > 8 {
		p.errorf(n, "merge keys nested too deeply")
		return nil
	}
	explicit := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if !p.spend(k) {
			return nil
		}
		if k == nil || k.Kind != yaml.ScalarNode {
			p.errorf(n.Content[i], "%s names must be strings", what)
			continue
		}
		if k.Tag == "!!merge" {
			continue
		}
		if first, dup := explicit[k.Value]; dup {
			p.errorf(k, "%s %q defined twice (first at line %d)", what, k.Value, first.Line)
			continue
		}
		explicit[k.Value] = k
	}
	var out []kv
	emitted := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			continue
		}
		if k.Tag != "!!merge" {
			if explicit[k.Value] == k && !emitted[k.Value] {
				emitted[k.Value] = true
				out = append(out, kv{k.Value, k, v})
			}
			continue
		}
		srcs := []*yaml.Node{deref(v)}
		if s := srcs[0]; s != nil && s.Kind == yaml.SequenceNode {
			srcs = s.Content
		}
		for _, src := range srcs {
			src = deref(src)
			if src == nil || src.Kind != yaml.MappingNode {
				p.errorf(k, "a merge (<<) needs a map or a list of maps")
				continue
			}
			for _, m := range p.pairsDepth(src, what, depth+1) {
				if explicit[m.key] != nil || emitted[m.key] {
					continue
				}
				emitted[m.key] = true
				out = append(out, m)
			}
		}
	}
	return out
}
