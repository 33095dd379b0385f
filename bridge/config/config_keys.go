package config

import (
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.yaml.in/yaml/v3"
)

// serverKey is one key a server entry may have: its name as written in the file, the slot it
// fills and the reader that stores its value. Keys that fill the same slot (url and
// serverUrl, env and environment, ...) exclude each other.
type serverKey struct {
	name string
	slot string    // what the key sets, named in "both set the ..." errors; "" claims nothing
	read keyReader // nil unless kind is readKey
	kind keyKind
}

// keyReader stores the value v of key k in s (or records a problem). v is never null.
type keyReader func(p *parser, s *serverState, k, v *yaml.Node)

// keyKind says what the parser does with a key.
type keyKind int

const (
	readKey        keyKind = iota // read; a near-miss spelling of it is an error
	ignoredKey                    // another client's key that does not change how a server is reached
	unsupportedKey                // another client's feature the bridge does not implement: warned
)

// Slots: what a key sets. Two keys of one server that fill one slot are an error.
const (
	slotType     = "transport type"
	slotCommand  = "command"
	slotArgs     = "args"
	slotEnv      = "environment"
	slotDir      = "working directory"
	slotURL      = "URL"
	slotHeaders  = "headers"
	slotRequired = "required flag"
	slotPrefix   = "prefix"
	slotInclude  = "tool include list"
	slotExclude  = "tool exclude list"
	slotConnect  = "connect timeout"
	slotCall     = "call timeout"
	slotExpose   = "exposed features"
	slotAuth     = "authorization"
	slotProtocol = "protocol version"
	slotDefer    = "deferred loading"
	slotTasks    = "task mode"
	slotTaskTime = "task timeout"
)

// serverKeys is the table of server keys: every key the parser reads, ignores or warns
// about is here, once; the "did you mean" candidates, the ignored and the unsupported keys
// are all derived from it. A new spelling of an existing setting is one line. A new setting
// is one line naming its slot and a reader that stores it in a ServerConfig field, plus a
// sample in keySamples (config_keys_test.go), which TestEveryServerKeyIsRead demands; a key
// that becomes read (say "auth") leaves the ignored or unsupported rows, or the test fails.
// Document it in LoadConfig's format section.
func serverKeys() []serverKey {
	return []serverKey{
		{"type", slotType, readType, readKey},
		{"transport", slotType, readType, readKey},     // Codex, mcphost, Windsurf
		{"transportType", slotType, readType, readKey}, // Cline
		{"command", slotCommand, (*parser).command, readKey},
		{"args", slotArgs, (*parser).args, readKey},
		{"env", slotEnv, readEnv, readKey},
		{"environment", slotEnv, readEnv, readKey}, // mcphost
		{"cwd", slotDir, readDir, readKey},
		{"dir", slotDir, readDir, readKey},
		{"url", slotURL, readURL, readKey},
		{"serverUrl", slotURL, readURL, readKey},   // Windsurf
		{"httpUrl", slotURL, readHTTPURL, readKey}, // Gemini: Streamable HTTP
		{"headers", slotHeaders, readHeaders, readKey},
		{"http_headers", slotHeaders, readHeaders, readKey}, // Codex
		{"disabled", "", readDisabled, readKey},
		{"enabled", "", readEnabled, readKey},
		{"required", slotRequired, readRequired, readKey},
		{"prefix", slotPrefix, readPrefix, readKey},
		{"expose", slotExpose, readExpose, readKey},
		{"tools", "", (*parser).tools, readKey},               // claims include/exclude itself
		{"includeTools", slotInclude, readInclude, readKey},   // Gemini
		{"allowedTools", slotInclude, readInclude, readKey},   // mcphost
		{"enabled_tools", slotInclude, readInclude, readKey},  // Codex
		{"excludeTools", slotExclude, readExclude, readKey},   // Gemini
		{"excludedTools", slotExclude, readExclude, readKey},  // mcphost
		{"disabled_tools", slotExclude, readExclude, readKey}, // Codex
		{"timeouts", "", (*parser).timeouts, readKey},         // claims connect/call itself
		{"connectTimeout", slotConnect, connectTimeoutIn(time.Millisecond), readKey},
		{"connectionTimeout", slotConnect, connectTimeoutIn(time.Millisecond), readKey},  // Inspector
		{"startup_timeout_ms", slotConnect, connectTimeoutIn(time.Millisecond), readKey}, // Codex
		{"startup_timeout_sec", slotConnect, connectTimeoutIn(time.Second), readKey},     // Codex
		{"callTimeout", slotCall, callTimeoutIn(time.Millisecond), readKey},
		{"requestTimeout", slotCall, callTimeoutIn(time.Millisecond), readKey}, // Inspector
		{"tool_timeout_sec", slotCall, callTimeoutIn(time.Second), readKey},    // Codex
		{"timeout", slotCall, readGeminiTimeout, readKey},                      // Gemini (ms), Cline (s)
		{"protocolVersion", slotProtocol, readProtocolVersion, readKey},
		{"defer", slotDefer, readDefer, readKey},
		{"tasks", slotTasks, readTasks, readKey},

		{"trust", "", nil, ignoredKey},
		{"autoApprove", "", nil, ignoredKey},
		{"alwaysAllow", "", nil, ignoredKey},
		{"description", "", nil, ignoredKey},
		{"title", "", nil, ignoredKey},
		{"name", "", nil, ignoredKey},
		{"gallery", "", nil, ignoredKey},
		{"version", "", nil, ignoredKey},
		{"icon", "", nil, ignoredKey},
		{"roots", "", nil, ignoredKey},
		{"metadata", "", nil, ignoredKey},
		{"autoRefreshOnListChanged", "", nil, ignoredKey},
		{"protocolEra", "", nil, ignoredKey},
		{"supports_parallel_tool_calls", "", nil, ignoredKey},
		{"default_tools_approval_mode", "", nil, ignoredKey},
		{"encoding", "", nil, ignoredKey},
		{"encoding_error_handler", "", nil, ignoredKey},
		{"terminate_on_close", "", nil, ignoredKey},
		{"options", "", nil, ignoredKey},

		{"envFile", "", nil, unsupportedKey},
		{"env_vars", "", nil, unsupportedKey},
		{"headersHelper", "", nil, unsupportedKey},
		{"auth", slotAuth, readAuth, readKey},
		{"oauth", slotAuth, readAuth, readKey}, // Gemini CLI
		{"authProvider", "", nil, unsupportedKey},
		{"scopes", "", nil, unsupportedKey},
		{"oauth_resource", "", nil, unsupportedKey},
		{"bearer_token_env_var", "", nil, unsupportedKey},
		{"env_http_headers", "", nil, unsupportedKey},
		{"sse_read_timeout", "", nil, unsupportedKey},
		{"restart", "", nil, unsupportedKey},
		{"reconnect", "", nil, unsupportedKey},
		{"stderr", "", nil, unsupportedKey},
		{"ws_url", "", nil, unsupportedKey},
	}
}

// keyIndex returns serverKeys by name.
func keyIndex() map[string]serverKey {
	keys := serverKeys()
	m := make(map[string]serverKey, len(keys))
	for _, k := range keys {
		m[k.name] = k
	}
	return m
}

// readKeyNames returns the names of the keys the parser reads, in table order: the
// candidates for "did you mean".
func readKeyNames() []string {
	var names []string
	for _, k := range serverKeys() {
		if k.kind == readKey {
			names = append(names, k.name)
		}
	}
	return names
}

// The readers the table names that are not parser methods.

func readType(p *parser, s *serverState, k, v *yaml.Node) {
	s.typeKey = k
	p.serverType(s, k, v)
}

func readEnv(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Env = p.stringMap(s, k, v, "env", nil)
}

func readDir(p *parser, s *serverState, k, v *yaml.Node) {
	p.stringField(s, k, v, "cwd", &s.sc.Dir, true)
}

func readURL(p *parser, s *serverState, k, v *yaml.Node) {
	p.stringField(s, k, v, "url", &s.sc.URL, true)
}

func readHTTPURL(p *parser, s *serverState, k, v *yaml.Node) {
	s.httpURL = true
	readURL(p, s, k, v)
}

func readHeaders(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Headers = p.headers(s, k, v)
}

func readDisabled(p *parser, s *serverState, k, v *yaml.Node) {
	if b, ok := p.boolean(s, k, v); ok && b {
		s.disabled = true
	}
}

func readEnabled(p *parser, s *serverState, k, v *yaml.Node) {
	if b, ok := p.boolean(s, k, v); ok && !b {
		s.disabled = true
	}
}

func readRequired(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Required, _ = p.boolean(s, k, v)
}

func readDefer(p *parser, s *serverState, k, v *yaml.Node) {
	if b, ok := p.boolean(s, k, v); ok {
		s.sc.Defer = &b
	}
}

func readProtocolVersion(p *parser, s *serverState, k, v *yaml.Node) {
	var ver string
	p.stringField(s, k, v, "protocolVersion", &ver, false)
	if ver != "" && !supportedVersion(ver) {
		p.errorf(v, "server %q: unsupported %s %q (want one of %s)", s.id, k.Value, ver, strings.Join(mcp.SupportedProtocolVersions(), ", "))
		return
	}
	s.sc.ProtocolVersion = ver
}

func readTasks(p *parser, s *serverState, k, v *yaml.Node) {
	var mode string
	p.stringField(s, k, v, "tasks", &mode, false)
	if m := TaskMode(mode); mode == "" || !m.Valid() {
		p.errorf(v, "server %q: %s must be auto, always or never, not %q", s.id, k.Value, mode)
		return
	}
	s.sc.Tasks = TaskMode(mode)
}

func readPrefix(p *parser, s *serverState, k, v *yaml.Node) {
	p.stringField(s, k, v, "prefix", &s.sc.Prefix, false)
}

func readInclude(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Include = p.globs(s, v, k.Value)
}

func readExclude(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Exclude = p.globs(s, v, k.Value)
}

func readExpose(p *parser, s *serverState, k, v *yaml.Node) {
	s.sc.Expose = p.expose(s, v)
}
