package bridge

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.yaml.in/yaml/v3"
)

// The servers-file reader is split by concern:
//
//	config.go           LoadConfig, ReadConfig and the file format (on LoadConfig)
//	config_yaml.go      walking YAML: positions, errors, the node budget, aliases and merge keys
//	                    (go-yaml's error texts are matched in deptext.go)
//	config_file.go      the document level: where the servers map is, dialects' selections
//	config_keys.go      the one table of server keys (key -> slot -> reader)
//	config_server.go    one server entry: the key loop, combination checks, expansion
//	config_read.go      field readers (strings, lists, maps, headers, tool globs)
//	config_duration.go  timeouts and durations
//	config_expand.go    ${VAR} expansion
//	config_suggest.go   "did you mean" suggestions for misspelt keys

// ConfigFile is a parsed servers file with its warnings, for tools that display them (the
// CLI). Servers holds the enabled servers in file order.
type ConfigFile struct {
	Servers  []ServerConfig
	Warnings []string
}

// LoadConfig reads a servers file and returns the enabled servers in file order. Warnings
// (foreign dialects' unknown keys, unresolvable ${input:...}) are logged to slog.Default() at
// Warn. Variables are expanded from the process environment. [ReadConfig] returns the
// warnings instead.
//
// The file format (dialects, keys and aliases, variables, unknown keys, limits) is the package
// documentation's section "The servers file".
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

// ReadConfig reads and parses the servers file at path (format: [LoadConfig]); messages name
// the file as path. Files over 8 MiB are refused.
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
	return parseConfig(data, path, os.LookupEnv)
}

// parseConfig parses a servers file held in data, expanding variables with lookup. name is
// used in messages ("name:line: ..."). The error, if any, lists every problem found (up to
// maxErrors), each with its line.
func parseConfig(data []byte, name string, lookup lookupFunc) (*ConfigFile, error) {
	p := newParser(name, lookup)
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
