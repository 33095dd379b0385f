package config

import (
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pending is one string field awaiting variable expansion.
type pending struct {
	n     *yaml.Node
	field string
	val   string
	set   func(string)
}

// serverState is what server collects before it validates and expands.
type serverState struct {
	id       string
	sc       ServerConfig
	setBy    map[string]*yaml.Node // slot -> the key that set it
	typeKey  *yaml.Node            // the type/transport key, if any
	httpURL  bool                  // the URL came from httpUrl
	cmdList  bool                  // command was a list
	skip     string                // why the server is skipped, if it is
	disabled bool                  // disabled: true or enabled: false
	fields   []pending
}

// claim records that key k sets slot, and reports false (with an error) if another key did.
func (p *parser) claim(s *serverState, slot string, k *yaml.Node) bool {
	if prev := s.setBy[slot]; prev != nil {
		p.errorf(k, "server %q: %q and %q (line %d) both set the %s", s.id, k.Value, prev.Value, prev.Line, slot)
		return false
	}
	s.setBy[slot] = k
	return true
}

// server parses one server entry; ok is false when it is skipped or has errors.
func (p *parser) server(id string, key, val *yaml.Node) (ServerConfig, bool) {
	nerr := len(p.errs)
	s := &serverState{id: id, setBy: map[string]*yaml.Node{}}
	s.sc.ID = id
	s.sc.Source = p.where(key)
	m := deref(val)
	if m == nil || m.Kind != yaml.MappingNode {
		p.errorf(val, "server %q: want a map of settings", id)
		return ServerConfig{}, false
	}
	for _, e := range p.pairs(m, "key") {
		sk, known := p.keys[e.key]
		switch {
		case !known:
			p.unknownKey(s, e.k)
		case sk.kind == ignoredKey:
		case sk.kind == unsupportedKey:
			p.warnf(e.k, "server %q: %q is not supported by mcpbridge; ignored", s.id, e.key)
		case isNull(deref(e.v)):
			// "key: null" is the same as no key.
		case sk.slot == "" || p.claim(s, sk.slot, e.k):
			sk.read(p, s, e.k, e.v)
		}
	}
	if s.skip != "" {
		p.warnf(key, "server %q: %s; skipped", id, s.skip)
		return ServerConfig{}, false
	}
	if s.disabled {
		return ServerConfig{}, false
	}
	p.check(s, key)
	if len(p.errs) > nerr {
		return ServerConfig{}, false
	}
	if !p.expandAll(s) {
		return ServerConfig{}, false
	}
	if s.sc.URL != "" {
		if u, err := url.Parse(s.sc.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.errorf(s.setBy[slotURL], "server %q: url is not an http:// or https:// URL", id)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.sc.Headers)) {
		if strings.ContainsAny(s.sc.Headers[name], "\r\n\x00") {
			p.errorf(s.setBy[slotHeaders], "server %q: headers.%s: value contains a line break or NUL", id, name)
		}
	}
	if s.setBy[slotCommand] != nil && s.sc.Command == "" {
		p.errorf(s.setBy[slotCommand], "server %q: command is empty", id)
	}
	if len(p.errs) > nerr {
		return ServerConfig{}, false
	}
	return s.sc, true
}

// check validates the combination of fields.
func (p *parser) check(s *serverState, key *yaml.Node) {
	cmd, u := s.setBy[slotCommand], s.setBy[slotURL]
	switch {
	case cmd != nil && u != nil:
		p.errorf(u, "server %q: has both a command (line %d) and a %s; a server is either local or remote", s.id, cmd.Line, u.Value)
		return
	case cmd == nil && u == nil:
		p.errorf(key, "server %q: has neither a command nor a url", s.id)
		return
	}
	if s.httpURL {
		switch s.sc.Type {
		case "":
			s.sc.Type = TypeHTTP
		case TypeHTTP:
		default:
			p.errorf(s.typeKey, "server %q: type %s contradicts httpUrl (Streamable HTTP)", s.id, s.sc.Type)
		}
	}
	switch {
	case cmd != nil && s.sc.Type != "" && s.sc.Type != TypeStdio:
		p.errorf(s.typeKey, "server %q: type %s needs a url, not a command", s.id, s.sc.Type)
	case u != nil && s.sc.Type == TypeStdio:
		p.errorf(s.typeKey, "server %q: type stdio needs a command, not a url", s.id)
	}
	if u != nil {
		for _, slot := range []string{slotArgs, slotEnv, slotDir} {
			if k := s.setBy[slot]; k != nil {
				p.warnf(k, "server %q: %q is for local (command) servers; ignored", s.id, k.Value)
			}
		}
		s.sc.Args, s.sc.Env, s.sc.Dir = nil, nil, ""
		s.fields = dropFields(s.fields, "args[", "env.", "cwd")
	}
	if cmd != nil {
		if k := s.setBy[slotHeaders]; k != nil {
			p.warnf(k, "server %q: %q is for remote (url) servers; ignored", s.id, k.Value)
			s.sc.Headers = nil
			s.fields = dropFields(s.fields, "headers.")
		}
		if k := s.setBy[slotAuth]; k != nil {
			p.warnf(k, "server %q: %q is for remote (url) servers; ignored", s.id, k.Value)
			s.sc.Auth = nil
			s.fields = dropFields(s.fields, k.Value+".")
		}
	}
}

func dropFields(fs []pending, prefixes ...string) []pending {
	out := fs[:0]
	for _, f := range fs {
		keep := true
		for _, pre := range prefixes {
			if strings.HasPrefix(f.field, pre) {
				keep = false
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// expandAll expands variables in the pending fields. It reports false when the server
// cannot be used (errors recorded, or skipped for a VS Code input).
func (p *parser) expandAll(s *serverState) bool {
	ok := true
	for _, f := range s.fields {
		v, err := expand(f.val, p.lookup)
		if err == nil {
			f.set(v)
			continue
		}
		var in *inputVarError
		if errors.As(err, &in) && !s.sc.Required {
			p.warnf(f.n, "server %q: %s: %v; skipped", s.id, f.field, err)
			return false
		}
		p.errorf(f.n, "server %q: %s: %w", s.id, f.field, err)
		ok = false
	}
	return ok
}

// unknownKey reports a key that is not in serverKeys: an error when it looks like a
// misspelling of a key the parser reads, else a warning.
func (p *parser) unknownKey(s *serverState, k *yaml.Node) {
	if near := nearest(k.Value, readKeyNames()); near != "" {
		p.errorf(k, "server %q: unknown key %q (did you mean %q?)", s.id, k.Value, near)
		return
	}
	p.warnf(k, "server %q: unknown key %q ignored", s.id, k.Value)
}
