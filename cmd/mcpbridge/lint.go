package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// Provider lint: things in a model-visible tool that model APIs are known to reject. The
// bridge passes schemas through unchanged (apart from adding "properties":{} to a bare
// {"type":"object"}), so these reach the provider as the server sent them.
const (
	maxLintDepth    = 64 // nesting levels walked in one schema
	maxLintFindings = 8  // findings reported per tool
)

// lintTool returns the provider problems of one model-visible tool, in a stable order.
func lintTool(t bridge.Tool) []string {
	var out []string
	if !bridge.ValidToolName(t.Name) {
		out = append(out, fmt.Sprintf("name %q does not match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (OpenAI, Anthropic and Gemini reject it)", t.Name))
	}
	out = append(out, lintSchema(t.Parameters)...)
	if len(out) > maxLintFindings {
		out = append(out[:maxLintFindings], fmt.Sprintf("… and %d more", len(out)-maxLintFindings))
	}
	return out
}

// lintSchema checks a tool's parameters schema (untrusted server data) for what providers
// reject.
func lintSchema(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{fmt.Sprintf("parameters are not valid JSON: %v", err)}
	}
	top, ok := v.(map[string]any)
	if !ok {
		return []string{"parameters are not a JSON object: every provider rejects the tool"}
	}
	var out []string
	typ, hasType := top["type"]
	switch {
	case !hasType:
		out = append(out, `no top-level "type": OpenAI requires "type": "object" for function parameters, and Gemini rejects schemas without it (gemini-cli#23382)`)
	case typ != "object":
		out = append(out, fmt.Sprintf(`top-level "type" is %s, not "object": OpenAI, Anthropic and Gemini require an object schema for tool parameters`, compact(typ)))
	default:
		if _, ok := top["properties"]; !ok {
			out = append(out, `object schema without "properties": OpenAI rejects it ("object schema missing properties"); add "properties": {}`)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "not"} {
		if _, ok := top[k]; ok {
			out = append(out, fmt.Sprintf(`top-level %q: OpenAI rejects function parameters with oneOf/anyOf/allOf/enum/not at the top level`, k))
		}
	}
	var local bool
	walkSchema(v, "", 0, func(ptr, ref string) {
		if strings.HasPrefix(ref, "#") {
			local = true
			return
		}
		out = append(out, fmt.Sprintf(`"$ref" at %s points outside the schema (%s): no provider fetches it, and the bridge does not validate against it`, ptrOrRoot(ptr), redact.URL(ref)))
	})
	_, defs := top["$defs"]
	_, definitions := top["definitions"]
	if local || defs || definitions {
		out = append(out, `uses "$ref"/"$defs": Gemini's function "parameters" (an OpenAPI subset) rejects them (gemini-cli#13326); OpenAI and Anthropic resolve local references`)
	}
	return out
}

// walkSchema calls ref for every "$ref" string in v, with its JSON pointer, visiting object
// keys in sorted order so findings are stable.
func walkSchema(v any, ptr string, depth int, ref func(ptr, ref string)) {
	if depth > maxLintDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			if s, ok := x[k].(string); ok && k == "$ref" {
				ref(ptr, s)
				continue
			}
			walkSchema(x[k], p, depth+1, ref)
		}
	case []any:
		for i, e := range x {
			walkSchema(e, fmt.Sprintf("%s/%d", ptr, i), depth+1, ref)
		}
	}
}

func ptrOrRoot(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
