package config

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.yaml.in/yaml/v3"
)

// The servers-file reader is split by concern:
//
//	config.go           Read and Load, the file's limits
//	validate.go         the rules on a ServerConfig's values, for the parser and for Go
//	config_yaml.go      walking YAML: positions, errors, the node budget, aliases and merge keys
//	                    (go-yaml's error texts are matched in deptext.go)
//	config_file.go      the document level: where the servers map is, dialects' selections
//	config_keys.go      the one table of server keys (key -> slot -> reader)
//	config_server.go    one server entry: the key loop, combination checks, expansion
//	config_read.go      field readers (strings, lists, maps, headers, tool globs)
//	config_duration.go  timeouts and durations
//	config_expand.go    ${VAR} expansion
//	config_suggest.go   "did you mean" suggestions for misspelt keys
//	config_types.go     ServerConfig and its safe-to-log methods

// The servers file's limits (rows of bridge's limits table).
const (
	MaxConfigSize  = 8 << 20          // a servers file, in bytes
	NodeBudget     = 200_000          // YAML nodes visited in one servers file (aliases included)
	MaxErrors      = 20               // problems one servers file reports before summarising
	MaxTimeout     = 1000 * time.Hour // a timeout in a servers file
	MaxExpandDepth = 8                // ${A:-${B:-...}} nesting in a servers file
)

// Load reads a servers file and returns the enabled servers in file order. Warnings
// (foreign dialects' unknown keys, unresolvable ${input:...}) are logged to slog.Default() at
// Warn. Variables are expanded from the process environment. Read returns the warnings
// instead.
func Load(path string) ([]ServerConfig, error) {
	servers, warnings, err := Read(path)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		slog.Default().Warn(w)
	}
	return servers, nil
}

// Read reads and parses the servers file at path (the format is the package
// documentation's), returning the enabled servers in file order and the warnings, for tools
// that display them (the CLI); messages name the file as path. Files over MaxConfigSize
// bytes are refused.
func Read(path string) (servers []ServerConfig, warnings []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read servers file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read servers file: %w", err)
	}
	if len(data) > MaxConfigSize {
		return nil, nil, fmt.Errorf("read servers file %s: larger than %d bytes", path, MaxConfigSize)
	}
	pf, err := parseConfig(data, path, os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	return pf.Servers, pf.Warnings, nil
}

// parsed is a parsed servers file: the enabled servers in file order, and the warnings.
type parsed struct {
	Servers  []ServerConfig
	Warnings []string
}

// parseConfig parses a servers file held in data, expanding variables with lookup. name is
// used in messages ("name:line: ..."). The error, if any, lists every problem found (up to
// MaxErrors), each with its line.
func parseConfig(data []byte, name string, lookup lookupFunc) (*parsed, error) {
	p := newParser(name, lookup)
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err)
	}
	cf := &parsed{}
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
