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
func ValidateArgs(sch *Compiled, args json.RawMessage) error {
	inst, err := DecodeArgs(args)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	return validateInstance(sch, inst)
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
