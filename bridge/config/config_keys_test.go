package config

import (
	"reflect"
	"strings"
	"testing"
)

// keySamples gives, for every key the parser reads, a server entry without the key (base)
// and the line that adds it. The key counts as read when the entry with it parses without
// warnings into something other than the base (a different ServerConfig, or no server).
func keySamples() map[string]struct{ base, line string } {
	return map[string]struct{ base, line string }{
		"type":                {"command: x", "type: stdio"},
		"transport":           {"url: https://h/mcp", "transport: sse"},
		"transportType":       {"url: https://h/mcp", "transportType: streamableHttp"},
		"command":             {"env: {A: b}", "command: x"},
		"args":                {"command: x", "args: [a]"},
		"env":                 {"command: x", "env: {A: b}"},
		"environment":         {"command: x", "environment: {A: b}"},
		"cwd":                 {"command: x", "cwd: /tmp"},
		"dir":                 {"command: x", "dir: /tmp"},
		"url":                 {"required: true", "url: https://h/mcp"},
		"serverUrl":           {"required: true", "serverUrl: https://h/mcp"},
		"httpUrl":             {"required: true", "httpUrl: https://h/mcp"},
		"headers":             {"url: https://h/mcp", "headers: {A: b}"},
		"http_headers":        {"url: https://h/mcp", "http_headers: {A: b}"},
		"disabled":            {"command: x", "disabled: true"},
		"enabled":             {"command: x", "enabled: false"},
		"required":            {"command: x", "required: true"},
		"prefix":              {"command: x", "prefix: p"},
		"expose":              {"command: x", "expose: [resources, prompts]"},
		"protocolVersion":     {"command: x", "protocolVersion: \"2025-11-25\""},
		"defer":               {"command: x", "defer: false"},
		"tools":               {"command: x", "tools: {include: [a]}"},
		"includeTools":        {"command: x", "includeTools: [a]"},
		"allowedTools":        {"command: x", "allowedTools: [a]"},
		"enabled_tools":       {"command: x", "enabled_tools: [a]"},
		"excludeTools":        {"command: x", "excludeTools: [a]"},
		"excludedTools":       {"command: x", "excludedTools: [a]"},
		"disabled_tools":      {"command: x", "disabled_tools: [a]"},
		"timeouts":            {"command: x", "timeouts: {call: 5s}"},
		"auth":                {"url: https://h/mcp", "auth: {type: client_credentials, client_id: svc, client_secret: s, scopes: [a, b]}"},
		"oauth":               {"url: https://h/mcp", "oauth: {enabled: true, clientId: x, scopes: [a]}"},
		"connectTimeout":      {"command: x", "connectTimeout: 5000"},
		"connectionTimeout":   {"command: x", "connectionTimeout: 5000"},
		"startup_timeout_ms":  {"command: x", "startup_timeout_ms: 5000"},
		"startup_timeout_sec": {"command: x", "startup_timeout_sec: 5"},
		"callTimeout":         {"command: x", "callTimeout: 5000"},
		"requestTimeout":      {"command: x", "requestTimeout: 5000"},
		"tool_timeout_sec":    {"command: x", "tool_timeout_sec: 5"},
		"timeout":             {"command: x", "timeout: 5000"},
		"tasks":               {"command: x", "tasks: always"},
	}
}

// parseEntry parses one server entry given as lines of its settings map.
func parseEntry(lines ...string) (*parsed, error) {
	var b strings.Builder
	b.WriteString("servers:\n  a:\n")
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	return parseConfig([]byte(b.String()), "x.yaml", mapEnv(nil))
}

// TestEveryServerKeyIsRead proves that each key the table says is read has an effect, and
// that the table and the samples agree.
func TestEveryServerKeyIsRead(t *testing.T) {
	t.Parallel()
	samples := keySamples()
	seen := map[string]bool{}
	for _, k := range serverKeys() {
		if seen[k.name] {
			t.Errorf("key %q is in the table twice", k.name)
		}
		seen[k.name] = true
		if (k.kind == readKey) != (k.read != nil) {
			t.Errorf("key %q: kind %d with reader %v", k.name, k.kind, k.read != nil)
		}
		if k.kind != readKey {
			if _, ok := samples[k.name]; ok {
				t.Errorf("key %q is not read but has a sample", k.name)
			}
			continue
		}
		sample, ok := samples[k.name]
		if !ok {
			t.Errorf("key %q has no sample in keySamples: add one", k.name)
			continue
		}
		base, _ := parseEntry(sample.base)
		with, err := parseEntry(sample.base, sample.line)
		if err != nil {
			t.Errorf("key %q: %v", k.name, err)
			continue
		}
		if len(with.Warnings) > 0 {
			t.Errorf("key %q: warnings %q", k.name, with.Warnings)
		}
		if base != nil && reflect.DeepEqual(base.Servers, with.Servers) {
			t.Errorf("key %q (%s) changes nothing: %v", k.name, sample.line, with.Servers)
		}
	}
	for name := range samples {
		if !seen[name] {
			t.Errorf("sample for %q, which is not in the table", name)
		}
	}
}

// TestKeysOfOneSlotExcludeEachOther gives every pair of keys that fill one slot together.
func TestKeysOfOneSlotExcludeEachOther(t *testing.T) {
	t.Parallel()
	samples := keySamples()
	bySlot := map[string][]string{}
	for _, k := range serverKeys() {
		if k.slot != "" {
			bySlot[k.slot] = append(bySlot[k.slot], k.name)
		}
	}
	for slot, names := range bySlot {
		for i, a := range names {
			for _, b := range names[i+1:] {
				sa, sb := samples[a], samples[b]
				_, err := parseEntry(sa.base, sa.line, sb.line)
				want := "both set the " + slot
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s with %s: err = %v, want %q", a, b, err, want)
				}
			}
		}
	}
}

// TestForeignKeys checks that ignored keys are silent and unsupported keys warned.
func TestForeignKeys(t *testing.T) {
	t.Parallel()
	for _, k := range serverKeys() {
		if k.kind == readKey {
			continue
		}
		cf, err := parseEntry("command: x", k.name+": 1")
		if err != nil {
			t.Errorf("key %q: %v", k.name, err)
			continue
		}
		want := 0
		if k.kind == unsupportedKey {
			want = 1
		}
		if len(cf.Warnings) != want {
			t.Errorf("key %q: warnings %q, want %d", k.name, cf.Warnings, want)
		}
	}
}
