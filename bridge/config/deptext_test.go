package config

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// go.yaml.in/yaml/v3's syntax errors have the form yamlSyntaxError parses; parser errors
// name the enclosing collection's zero-based line.
func TestDepTextYAMLSyntaxErrors(t *testing.T) {
	tests := []struct {
		doc          string
		line         int
		inCollection bool
	}{
		{"servers:\n  a: [1, 2\n  b: 3\n", 2, true},
		{"servers:\n  a: {x: 1\n", 2, true},
		{"a: 1\n\tb: 2\n", 2, false},
		{"a: 'unterminated\n", 2, false},
	}
	for _, tt := range tests {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tt.doc), &n)
		if err == nil {
			t.Fatalf("%q parsed", tt.doc)
		}
		line, msg, inColl := yamlSyntaxError(err)
		if line != tt.line || inColl != tt.inCollection || msg == "" || strings.HasPrefix(msg, "yaml:") {
			t.Errorf("%q: error %q parsed as line %d %q (collection %v), want line %d (collection %v)",
				tt.doc, err, line, msg, inColl, tt.line, tt.inCollection)
		}
	}
}
