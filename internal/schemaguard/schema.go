// Package schemaguard is the bridge's schema guarding: the checks a tool's inputSchema gets
// when it is listed (CheckSchema, ValidUTF8), the budgets a server's schema is measured
// against before it is compiled (Limits, Cache), argument checks and validation on each call
// (NormalizeArgs, NullPolicy, Schema.ValidateJSON) and the check of a result's
// structuredContent against the outputSchema (Schema.CheckOutput). A server's schema is
// untrusted code the bridge runs: it is measured in one linear pass, compiled with a loader
// that refuses external references, and validation never runs past the caller's deadline.
//
// Locks: Cache.mu and Schema.mu are leaves, and nothing is called while one is held: a
// schema is measured, compiled and a value validated without a lock (a compile runs on its
// own goroutine, its result stored under Schema.mu), and the logger CheckOutput is given is
// called unlocked.
//
// The package is internal to the module: package bridge is its only user.
package schemaguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// ErrInvalidArguments is wrapped by every error saying arguments are not a JSON object or do
// not match their schema (bridge.ErrInvalidArguments is this value).
var ErrInvalidArguments = errors.New("invalid arguments")

// CheckSchema verifies that raw is a JSON object and applies the one fix Parameters ever get:
// an object schema without "properties" gains "properties":{} (several model APIs reject
// {"type":"object"} alone). The bytes are otherwise untouched.
func CheckSchema(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, errors.New("inputSchema is missing")
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("inputSchema is not a JSON object (starts with %q)", firstRune(trimmed))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, fmt.Errorf("inputSchema is not valid JSON: %w", err)
	}
	if _, ok := top["properties"]; ok {
		return trimmed, nil
	}
	typ, ok := top["type"]
	if !ok || string(bytes.TrimSpace(typ)) != `"object"` {
		return trimmed, nil
	}
	fixed := make([]byte, 0, len(trimmed)+16)
	fixed = append(fixed, trimmed[:len(trimmed)-1]...)
	fixed = append(fixed, `,"properties":{}}`...)
	return fixed, nil
}

// ValidUTF8 returns raw with each run of bytes that are not UTF-8 replaced by U+FFFD, and
// whether raw was valid. In a valid JSON document such bytes can only be inside strings, so
// the result is still valid JSON. This is the one change Parameters get besides the
// properties:{} fix: a model API rejects the whole request for one invalid byte.
func ValidUTF8(raw json.RawMessage) (json.RawMessage, bool) {
	if utf8.Valid(raw) {
		return raw, true
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD")), false
}

func firstRune(b []byte) string {
	s := string(b)
	for _, r := range s {
		return string(r)
	}
	return ""
}

// refusingLoader is the only URL loader the schema compiler gets: a server's schema must
// never make the client read a local file or fetch a URL. The JSON Schema meta-schemas are
// built into the library and do not reach the loader.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q refused: schemas from MCP servers may only use internal references", url)
}

// Compile compiles a tool's inputSchema for argument validation. The schema's own
// $schema picks the draft (4 through 2020-12); the default is 2020-12.
func Compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	return compileDoc(doc)
}

// compileDoc compiles a decoded schema (see Compile).
func compileDoc(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(rootBase, doc); err != nil {
		return nil, err
	}
	return c.Compile(rootBase)
}

// NormalizeArgs turns the model's arguments into the JSON object sent to the server:
// empty, null and "" become {}; anything but an object is an error.
func NormalizeArgs(args json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(args)
	switch string(t) {
	case "", "null", `""`:
		return json.RawMessage(`{}`), nil
	}
	if t[0] != '{' {
		return nil, fmt.Errorf("%w: arguments must be a JSON object, got %s", ErrInvalidArguments, jsonKind(t))
	}
	if !json.Valid(t) {
		return nil, fmt.Errorf("%w: arguments are not valid JSON", ErrInvalidArguments)
	}
	return t, nil
}

func jsonKind(t []byte) string {
	switch t[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		if t[0] == '-' || (t[0] >= '0' && t[0] <= '9') {
			return "a number"
		}
		return "invalid JSON"
	}
}

// ValidateArgs checks args against a compiled schema. The error lists each failure with
// its JSON pointer in the arguments and the schema rule that failed.
func ValidateArgs(sch *jsonschema.Schema, args json.RawMessage) error {
	inst, err := DecodeArgs(args)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	return validateInstance(sch, inst)
}

// validateInstance is ValidateArgs for decoded arguments.
func validateInstance(sch *jsonschema.Schema, inst any) error {
	err := sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	var msgs []string
	collectLeaves(ve, &msgs)
	if len(msgs) == 0 {
		msgs = append(msgs, redact.Line(ve.Error(), 300))
	}
	const maxMsgs = 8
	if len(msgs) > maxMsgs {
		msgs = append(msgs[:maxMsgs], fmt.Sprintf("and %d more", len(msgs)-maxMsgs))
	}
	return fmt.Errorf("%w: %s", ErrInvalidArguments, strings.Join(msgs, "; "))
}

// collectLeaves describes each leaf failure as "at <pointer>: <message> (rule <keyword path>)".
func collectLeaves(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectLeaves(c, out)
		}
		return
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	// A leaf's Error() is a header line and one "- at '<ptr>': <message>" line.
	msg := ve.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "-"))
	if strings.HasPrefix(msg, "at '") {
		if j := strings.Index(msg, "': "); j >= 0 {
			msg = msg[j+3:]
		}
	}
	rule := ""
	if i := strings.Index(ve.SchemaURL, "#"); i >= 0 {
		rule = strings.TrimPrefix(ve.SchemaURL[i+1:], "/")
	}
	if kw := strings.Join(ve.ErrorKind.KeywordPath(), "/"); kw != "" {
		if rule != "" {
			rule += "/"
		}
		rule += kw
	}
	if rule == "" {
		*out = append(*out, fmt.Sprintf("at %s: %s", loc, msg))
		return
	}
	*out = append(*out, fmt.Sprintf("at %s: %s (rule %s)", loc, msg, rule))
}

// ToValue converts go-sdk's decoded value (float64 numbers) into what the schema validator
// expects (json.Number), by a round trip.
func ToValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}
