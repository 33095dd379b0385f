package config

// go.yaml.in/yaml/v3's error texts, which the parser can only recognise by their text. Each
// is pinned by a test against the real dependency (deptext_test.go), so an upgrade that
// changes one fails a test instead of silently changing config messages.

import (
	"regexp"
	"strconv"
	"strings"
)

// yamlLine matches the "yaml: line N: msg" form of go.yaml.in/yaml/v3's syntax errors.
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

// yamlSyntaxError splits a YAML syntax error into its one-based line (0 when it names none),
// its message, and whether the line is that of the list or map being parsed rather than of
// the offending token.
func yamlSyntaxError(err error) (line int, msg string, inCollection bool) {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, strings.TrimPrefix(err.Error(), "yaml: "), false
	}
	line, _ = strconv.Atoi(m[1])
	if yamlContextErrors[m[2]] {
		return line + 1, m[2], true
	}
	return line, m[2], false
}
