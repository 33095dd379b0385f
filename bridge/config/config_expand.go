package config

import (
	"errors"
	"fmt"
	"strings"
)

// lookupFunc reports the value of an environment variable and whether it is set.
// os.LookupEnv is one.
type lookupFunc func(name string) (string, bool)

// unsetVarError says a variable without a default is not set. Expr is the reference as
// written (it never holds a value).
type unsetVarError struct{ Expr string }

func (e *unsetVarError) Error() string { return e.Expr + " is not set" }

// inputVarError is a VS Code ${input:ID} reference: an interactive prompt that cannot be
// answered outside VS Code.
type inputVarError struct{ ID string }

func (e *inputVarError) Error() string {
	return fmt.Sprintf("${input:%s} is a VS Code input prompt and cannot be resolved outside VS Code", e.ID)
}

// expand replaces variable references in s with values from lookup:
//
//	${VAR}            the value of VAR; an error when VAR is unset
//	${VAR:-default}   the value of VAR, or default when VAR is unset or empty
//	${env:VAR}        VS Code and Windsurf spelling of ${VAR} (also ${env:VAR:-default})
//	${env://VAR}      mcphost spelling of ${VAR} (also ${env://VAR:-default})
//
// The default is itself expanded, so ${A:-${B}} works. "$$" and "$VAR" without braces are
// left as written, as is a "$" not followed by "{". ${input:ID} (VS Code) is an
// *inputVarError. Errors name the variable but never contain a value or a default.
func expand(s string, lookup lookupFunc) (string, error) {
	return expandDepth(s, lookup, 0)
}

func expandDepth(s string, lookup lookupFunc, depth int) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if depth > MaxExpandDepth {
		return "", errors.New("variable defaults nested too deeply")
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteString("$$")
			i += 2
			continue
		case '{':
		default:
			b.WriteByte(c)
			i++
			continue
		}
		end := matchBrace(s, i+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated \"${\" at byte %d", i)
		}
		val, err := resolveRef(s[i+2:end], lookup, depth)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		i = end + 1
	}
	return b.String(), nil
}

// matchBrace returns the index of the "}" closing a "${" whose body starts at start,
// counting nested "${", or -1.
func matchBrace(s string, start int) int {
	depth := 0
	for j := start; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			j++
		case s[j] == '}':
			if depth == 0 {
				return j
			}
			depth--
		}
	}
	return -1
}

// resolveRef resolves the body of one ${...} reference.
func resolveRef(body string, lookup lookupFunc, depth int) (string, error) {
	name, def, hasDef := strings.Cut(body, ":-")
	switch {
	case strings.HasPrefix(name, "input:"):
		id := strings.TrimPrefix(name, "input:")
		if !isVarName(strings.ReplaceAll(strings.ReplaceAll(id, "-", "_"), ".", "_")) {
			return "", errors.New("malformed ${input:...} reference")
		}
		return "", &inputVarError{ID: id}
	case strings.HasPrefix(name, "env://"):
		name = strings.TrimPrefix(name, "env://")
	case strings.HasPrefix(name, "env:"):
		name = strings.TrimPrefix(name, "env:")
	}
	if !isVarName(name) {
		if pre, _, ok := strings.Cut(name, ":"); ok && isVarName(pre) {
			return "", fmt.Errorf("${%s:...} references are not supported", pre)
		}
		return "", errors.New("malformed variable reference (want ${NAME} or ${NAME:-default})")
	}
	if v, ok := lookup(name); ok && (v != "" || !hasDef) {
		return v, nil
	}
	if hasDef {
		return expandDepth(def, lookup, depth+1)
	}
	return "", &unsetVarError{Expr: "${" + body + "}"}
}

// isVarName reports whether s is an environment variable name: [A-Za-z_][A-Za-z0-9_]*.
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
