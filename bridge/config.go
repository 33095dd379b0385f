package bridge

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxConfigSize bounds a servers file read by ReadConfig.
const maxConfigSize = 8 << 20

// nodeBudget bounds the YAML nodes visited, so aliases cannot make parsing quadratic.
const nodeBudget = 200_000

// maxErrors is how many problems one parse reports before it summarises the rest.
const maxErrors = 20

// ConfigFile is a parsed servers file with its warnings, for tools that display them (the
// CLI). Servers holds the enabled servers in file order.
type ConfigFile struct {
	Servers  []ServerConfig
	Warnings []string
}

// LoadConfig reads a servers file (YAML or JSON — JSON is YAML) and returns the enabled
// servers in file order. Warnings (foreign dialects' unknown keys, unresolvable
// ${input:...}) are logged to slog.Default() at Warn. Variables are expanded from the
// process environment. ParseConfig describes the format.
func LoadConfig(path string) ([]ServerConfig, error) {
	cf, err := ReadConfig(path)
	if err != nil {
		return nil, err
	}
	for _, w := range cf.Warnings {
		slog.Default().Warn(w)
	}
	return cf.Servers, nil
}

// ReadConfig reads and parses the servers file at path (see ParseConfig); messages name the
// file as path. Files over 8 MiB are refused.
func ReadConfig(path string) (*ConfigFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read servers file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read servers file: %w", err)
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("read servers file %s: larger than %d bytes", path, maxConfigSize)
	}
	return ParseConfig(data, path)
}

// ParseConfig parses a servers file held in data, expanding variables from the process
// environment. name is used in messages ("name:line: ..."). The error, if any, lists every
// problem found (up to a limit), each with its line.
//
// A servers file is YAML; JSON is YAML, so the JSON files of Claude Desktop, Claude Code
// (.mcp.json), Cursor, VS Code (.vscode/mcp.json), Windsurf, Gemini CLI and mcphost are read
// unchanged. The file holds exactly one map of servers under "servers", "mcpServers" or
// "mcp_servers" (or VS Code's user-settings "mcp": {"servers": ...}); the map key is the
// server ID and map order is config order. Other top-level keys ("inputs", "theme", ...)
// are ignored, except Gemini's "mcp": {"allowed": [...], "excluded": [...]}, which selects
// servers by ID.
//
// Per server (aliases from other dialects in parentheses):
//
//	type (transport, transportType)  stdio|local -> stdio; http|streamable-http|streamable_http|
//	                                 streamableHttp|streamable|remote -> http; sse; auto -> ""
//	command                          a string (with args) or a list whose first item is the program
//	args                             a list; numbers and booleans are stringified
//	env (environment)                a map; numbers and booleans are stringified
//	cwd (dir)                        working directory of a stdio server
//	url (serverUrl)                  endpoint; with no type it stays "" (auto-detect: Streamable
//	                                 HTTP, falling back to SSE), which also covers Gemini's url=SSE
//	httpUrl                          endpoint, and type http (Gemini)
//	headers (http_headers)           a map, or a list of "Name: value" strings (mcphost)
//	disabled: true / enabled: false  skip the server
//	required, prefix                 ServerConfig.Required and Prefix
//	tools: {include: [], exclude: []} glob patterns (path.Match); aliases includeTools/excludeTools
//	                                 (Gemini), allowedTools/excludedTools (mcphost),
//	                                 enabled_tools/disabled_tools (Codex)
//	timeouts: {connect: 30s, call: 60s}  Go durations; also connectTimeout/callTimeout (a Go
//	                                 duration or milliseconds), connectionTimeout/requestTimeout
//	                                 (Inspector, ms), startup_timeout_sec/startup_timeout_ms/
//	                                 tool_timeout_sec (Codex) and timeout (Gemini, ms, applies to
//	                                 calls; a number under 1000 is Cline's seconds, with a warning)
//
// Two keys that set the same thing (url and serverUrl, env and environment, tools.include and
// includeTools, ...) are an error, as are a command together with a url, neither of them, a
// type that contradicts them, an unknown type, and a duration that is not > 0.
//
// Unknown keys: a key inside "tools" or "timeouts" that is not known is an error, and so is a
// server key within a small edit distance of (or differing only in case from) a key the
// bridge reads ("comand", "requird", "Command"). Keys other clients use that do not change
// how a server is reached ("trust", "autoApprove", "alwaysAllow", "description", ...) are
// ignored silently. Known but unsupported features ("envFile", "headersHelper", "oauth",
// "bearer_token_env_var", ...) and any other unknown key are warnings naming the key.
//
// Variables are expanded in command, args, env values, cwd, url and header values of enabled
// servers: ${VAR}, ${VAR:-default} (default when VAR is unset or empty; it may itself hold
// ${...}), and the spellings ${env:VAR} (VS Code, Windsurf) and ${env://VAR} (mcphost), each
// with an optional :-default. "$$" and "$VAR" without braces are left as written. An unset
// variable without a default is an error naming file:line, server and field. A VS Code
// ${input:ID} cannot be answered headless: the server is skipped with a warning, or the file is
// an error when the server is required. Errors and warnings never contain env values, header
// values or the defaults of variables.
//
// Also: a disabled server is checked for key errors but not expanded; an mcphost "builtin"
// server is skipped with a warning; args, env and cwd on a url server, and headers on a
// command server, are warnings and dropped.
func ParseConfig(data []byte, name string) (*ConfigFile, error) {
	return parseConfig(data, name, os.LookupEnv)
}

// parseConfig is ParseConfig with the environment injected.
func parseConfig(data []byte, name string, lookup lookupFunc) (*ConfigFile, error) {
	p := &parser{name: name, lookup: lookup, budget: nodeBudget}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err)
	}
	cf := &ConfigFile{}
	p.file(&root, cf)
	if len(p.errs) > 0 {
		return nil, p.joined()
	}
	cf.Warnings = p.warns
	if cf.Servers == nil {
		cf.Servers = []ServerConfig{}
	}
	return cf, nil
}

// parser collects the problems of one servers file.
type parser struct {
	name   string
	lookup lookupFunc
	errs   []error
	warns  []string
	budget int
	broke  bool // the node budget ran out
}

// yamlLine matches the "yaml: line N: msg" form of the YAML parser's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlContextErrors are the parser (not scanner) errors of go.yaml.in/yaml/v3, whose line
// numbers are those of the enclosing collection, zero-based.
var yamlContextErrors = map[string]bool{
	"did not find expected ',' or ']'":    true,
	"did not find expected ',' or '}'":    true,
	"did not find expected '-' indicator": true,
	"did not find expected key":           true,
	"did not find expected node content":  true,
}

func (p *parser) yamlError(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if yamlContextErrors[m[2]] {
			// The YAML parser reports these at the zero-based line of the list or map
			// being parsed; name that line, one-based.
			return fmt.Errorf("%s:%d: %s (in the list or map that starts here)", p.name, line+1, m[2])
		}
		return fmt.Errorf("%s:%d: %s", p.name, line, m[2])
	}
	return fmt.Errorf("%s: %s", p.name, strings.TrimPrefix(msg, "yaml: "))
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
	if len(errs) > maxErrors {
		more := len(errs) - maxErrors
		errs = append(errs[:maxErrors:maxErrors], fmt.Errorf("%s: and %d more problems", p.name, more))
	}
	return errors.Join(errs...)
}

// spend charges one node to the budget and reports whether parsing may go on.
func (p *parser) spend(n *yaml.Node) bool {
	p.budget--
	if p.budget < 0 {
		if !p.broke {
			p.broke = true
			p.errorf(n, "file too complex (more than %d nodes after aliases)", nodeBudget)
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

// serverMapKeys are the top-level keys that hold the servers map.
var serverMapKeys = []string{"servers", "mcpServers", "mcp_servers"}

// file walks the document.
func (p *parser) file(root *yaml.Node, cf *ConfigFile) {
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
	for _, x := range s.excluded {
		if x == id {
			return true
		}
	}
	if len(s.allowed) == 0 {
		return false
	}
	for _, x := range s.allowed {
		if x == id {
			return false
		}
	}
	return true
}

func (p *parser) servers(key, val *yaml.Node, sel *selection, cf *ConfigFile) {
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

// Server keys, by what they set.
var (
	// handledKeys are the server keys the bridge reads; misspellings of them are errors.
	handledKeys = []string{
		"type", "transport", "transportType", "command", "args", "env", "environment", "cwd", "dir",
		"url", "serverUrl", "httpUrl", "headers", "http_headers", "disabled", "enabled", "required",
		"prefix", "tools", "includeTools", "excludeTools", "allowedTools", "excludedTools",
		"enabled_tools", "disabled_tools", "timeouts", "connectTimeout", "callTimeout",
		"connectionTimeout", "requestTimeout", "timeout", "startup_timeout_sec", "startup_timeout_ms",
		"tool_timeout_sec",
	}
	handledSet = func() map[string]bool {
		m := make(map[string]bool, len(handledKeys))
		for _, k := range handledKeys {
			m[k] = true
		}
		return m
	}()
	// ignoredKeys are other clients' keys that do not change how a server is reached.
	ignoredKeys = map[string]bool{
		"trust": true, "autoApprove": true, "alwaysAllow": true, "description": true, "title": true,
		"name": true, "gallery": true, "version": true, "icon": true, "roots": true, "metadata": true,
		"autoRefreshOnListChanged": true, "protocolEra": true, "supports_parallel_tool_calls": true,
		"default_tools_approval_mode": true, "encoding": true, "encoding_error_handler": true,
		"terminate_on_close": true, "options": true,
	}
	// unsupportedKeys are other clients' features the bridge does not implement.
	unsupportedKeys = map[string]bool{
		"envFile": true, "env_vars": true, "headersHelper": true, "oauth": true, "auth": true,
		"authProvider": true, "scopes": true, "oauth_resource": true, "bearer_token_env_var": true,
		"env_http_headers": true, "sse_read_timeout": true, "restart": true,
		"reconnect": true, "stderr": true, "ws_url": true,
	}
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
	id      string
	sc      ServerConfig
	setBy   map[string]*yaml.Node // slot -> the key that set it
	typeKey *yaml.Node            // the type/transport key, if any
	httpURL bool                  // the URL came from httpUrl
	cmdList bool                  // command was a list
	skip    string                // why the server is skipped, if it is
	fields  []pending
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
	disabled := false
	for _, e := range p.pairs(m, "key") {
		if isNull(deref(e.v)) && handledSet[e.key] {
			continue // "key: null" is the same as no key
		}
		switch e.key {
		case "type", "transport", "transportType":
			if p.claim(s, "transport type", e.k) {
				s.typeKey = e.k
				p.serverType(s, e.k, e.v)
			}
		case "command":
			if p.claim(s, "command", e.k) {
				p.command(s, e.k, e.v)
			}
		case "args":
			if p.claim(s, "args", e.k) {
				p.args(s, e.k, e.v)
			}
		case "env", "environment":
			if p.claim(s, "environment", e.k) {
				s.sc.Env = p.stringMap(s, e.k, e.v, "env", nil)
			}
		case "cwd", "dir":
			if p.claim(s, "working directory", e.k) {
				p.stringField(s, e.k, e.v, "cwd", &s.sc.Dir, true)
			}
		case "url", "serverUrl", "httpUrl":
			if p.claim(s, "URL", e.k) {
				s.httpURL = e.key == "httpUrl"
				p.stringField(s, e.k, e.v, "url", &s.sc.URL, true)
			}
		case "headers", "http_headers":
			if p.claim(s, "headers", e.k) {
				s.sc.Headers = p.headers(s, e.k, e.v)
			}
		case "disabled":
			if b, ok := p.boolean(s, e.k, e.v); ok && b {
				disabled = true
			}
		case "enabled":
			if b, ok := p.boolean(s, e.k, e.v); ok && !b {
				disabled = true
			}
		case "required":
			if p.claim(s, "required flag", e.k) {
				s.sc.Required, _ = p.boolean(s, e.k, e.v)
			}
		case "prefix":
			if p.claim(s, "prefix", e.k) {
				p.stringField(s, e.k, e.v, "prefix", &s.sc.Prefix, false)
			}
		case "tools":
			p.tools(s, e.k, e.v)
		case "includeTools", "allowedTools", "enabled_tools":
			if p.claim(s, "tool include list", e.k) {
				s.sc.Include = p.globs(s, e.v, e.key)
			}
		case "excludeTools", "excludedTools", "disabled_tools":
			if p.claim(s, "tool exclude list", e.k) {
				s.sc.Exclude = p.globs(s, e.v, e.key)
			}
		case "timeouts":
			p.timeouts(s, e.k, e.v)
		case "connectTimeout", "connectionTimeout", "startup_timeout_ms":
			if p.claim(s, "connect timeout", e.k) {
				s.sc.ConnectTimeout = p.duration(s, e.v, e.key, time.Millisecond)
			}
		case "startup_timeout_sec":
			if p.claim(s, "connect timeout", e.k) {
				s.sc.ConnectTimeout = p.duration(s, e.v, e.key, time.Second)
			}
		case "callTimeout", "requestTimeout":
			if p.claim(s, "call timeout", e.k) {
				s.sc.CallTimeout = p.duration(s, e.v, e.key, time.Millisecond)
			}
		case "tool_timeout_sec":
			if p.claim(s, "call timeout", e.k) {
				s.sc.CallTimeout = p.duration(s, e.v, e.key, time.Second)
			}
		case "timeout":
			if p.claim(s, "call timeout", e.k) {
				s.sc.CallTimeout = p.geminiTimeout(s, e.v)
			}
		default:
			p.unknownKey(s, e.k)
		}
	}
	if s.skip != "" {
		p.warnf(key, "server %q: %s; skipped", id, s.skip)
		return ServerConfig{}, false
	}
	if disabled {
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
			p.errorf(s.setBy["URL"], "server %q: url is not an http:// or https:// URL", id)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.sc.Headers)) {
		if strings.ContainsAny(s.sc.Headers[name], "\r\n\x00") {
			p.errorf(s.setBy["headers"], "server %q: headers.%s: value contains a line break or NUL", id, name)
		}
	}
	if s.setBy["command"] != nil && s.sc.Command == "" {
		p.errorf(s.setBy["command"], "server %q: command is empty", id)
	}
	if len(p.errs) > nerr {
		return ServerConfig{}, false
	}
	return s.sc, true
}

// check validates the combination of fields.
func (p *parser) check(s *serverState, key *yaml.Node) {
	cmd, u := s.setBy["command"], s.setBy["URL"]
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
		for _, slot := range []string{"args", "environment", "working directory"} {
			if k := s.setBy[slot]; k != nil {
				p.warnf(k, "server %q: %q is for local (command) servers; ignored", s.id, k.Value)
			}
		}
		s.sc.Args, s.sc.Env, s.sc.Dir = nil, nil, ""
		s.fields = dropFields(s.fields, "args[", "env.", "cwd")
	}
	if cmd != nil {
		if k := s.setBy["headers"]; k != nil {
			p.warnf(k, "server %q: %q is for remote (url) servers; ignored", s.id, k.Value)
			s.sc.Headers = nil
			s.fields = dropFields(s.fields, "headers.")
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

func (p *parser) unknownKey(s *serverState, k *yaml.Node) {
	switch {
	case ignoredKeys[k.Value]:
	case unsupportedKeys[k.Value]:
		p.warnf(k, "server %q: %q is not supported by mcpbridge; ignored", s.id, k.Value)
	default:
		if near := nearest(k.Value, handledKeys); near != "" {
			p.errorf(k, "server %q: unknown key %q (did you mean %q?)", s.id, k.Value, near)
			return
		}
		p.warnf(k, "server %q: unknown key %q ignored", s.id, k.Value)
	}
}

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
			if !validHeaderName(e.key) {
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
		if !ok || !validHeaderName(name) {
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

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
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
			if p.claim(s, "tool include list", e.k) {
				s.sc.Include = p.globs(s, e.v, "tools.include")
			}
		case "exclude":
			if p.claim(s, "tool exclude list", e.k) {
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
		if _, err := path.Match(it.s, ""); err != nil {
			p.errorf(it.n, "server %q: %s: bad pattern %q: %w", s.id, field, it.s, err)
			continue
		}
		out = append(out, it.s)
	}
	return out
}

func (p *parser) timeouts(s *serverState, k, v *yaml.Node) {
	n := deref(v)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(v, "server %q: timeouts must be a map with connect and/or call", s.id)
		return
	}
	for _, e := range p.pairs(n, "key") {
		switch e.key {
		case "connect":
			if p.claim(s, "connect timeout", e.k) {
				s.sc.ConnectTimeout = p.duration(s, e.v, "timeouts.connect", 0)
			}
		case "call":
			if p.claim(s, "call timeout", e.k) {
				s.sc.CallTimeout = p.duration(s, e.v, "timeouts.call", 0)
			}
		case "list", "initialize", "init":
			p.errorf(e.k, "server %q: timeouts.%s is not supported: timeouts.connect covers start-up, initialize and tools/list", s.id, e.key)
		default:
			p.errorf(e.k, "server %q: unknown key %q in timeouts (want connect or call)", s.id, e.key)
		}
	}
}

// maxTimeout bounds configured timeouts (and keeps number conversions in range).
const maxTimeout = 1000 * time.Hour

// duration reads a positive duration: a Go duration string ("30s"), or, when unit is not 0,
// a number of units.
func (p *parser) duration(s *serverState, v *yaml.Node, field string, unit time.Duration) time.Duration {
	n := deref(v)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errorf(v, "server %q: %s must be a duration such as 30s", s.id, field)
		return 0
	}
	var d time.Duration
	if n.Tag == "!!int" || n.Tag == "!!float" {
		if unit == 0 {
			p.errorf(v, "server %q: %s: %s has no unit (write %ss)", s.id, field, n.Value, n.Value)
			return 0
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsNaN(f) || f*float64(unit) > float64(maxTimeout) {
			p.errorf(v, "server %q: %s: %s is not a usable number", s.id, field, n.Value)
			return 0
		}
		d = time.Duration(f * float64(unit))
	} else {
		var err error
		d, err = time.ParseDuration(n.Value)
		if err != nil {
			p.errorf(v, "server %q: %s: %w", s.id, field, err)
			return 0
		}
	}
	if d <= 0 {
		p.errorf(v, "server %q: %s must be greater than 0", s.id, field)
		return 0
	}
	if d > maxTimeout {
		p.errorf(v, "server %q: %s is longer than %s", s.id, field, maxTimeout)
		return 0
	}
	return d
}

// geminiTimeout reads "timeout": milliseconds (Gemini CLI). A number under 1000 is taken as
// seconds, Cline's unit for the same key, since a sub-second call timeout is never meant.
func (p *parser) geminiTimeout(s *serverState, v *yaml.Node) time.Duration {
	d := p.duration(s, v, "timeout", time.Millisecond)
	if n := deref(v); d > 0 && d < time.Second && (n.Tag == "!!int" || n.Tag == "!!float") {
		p.warnf(v, "server %q: timeout %s is read as seconds (Cline); Gemini's is milliseconds: write timeouts: {call: ...} to be explicit", s.id, n.Value)
		d *= 1000
	}
	return d
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

// nearest returns the candidate that key is probably a misspelling of: equal but for case,
// or within edit distance 1 (short keys) or 2 (keys of 6+ letters). It returns "" if none.
func nearest(key string, candidates []string) string {
	lk := strings.ToLower(key)
	best, bestD := "", 3
	for _, c := range candidates {
		if c == key {
			return ""
		}
		lc := strings.ToLower(c)
		limit := 2
		if len(lc) < 6 {
			limit = 1
		}
		if d := editDistance(lk, lc, limit); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit+1 when it exceeds limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
