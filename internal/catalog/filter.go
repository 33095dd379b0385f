package catalog

import (
	"fmt"
	"path"
	"strings"
)

// Selected applies include and exclude globs (path.Match) to name: kept when it matches
// some include pattern (or there are none) and no exclude pattern. A malformed pattern
// matches nothing (CheckPatterns finds it). It is the rule of bridge.Tools.Filter and of a
// server's ServerConfig.Include and Exclude.
func Selected(include, exclude []string, name string) bool {
	if len(include) > 0 && !matchAny(include, name) {
		return false
	}
	return !matchAny(exclude, name)
}

// CheckPatterns returns an error naming the first malformed pattern.
func CheckPatterns(patterns []string) error {
	_, err := matchAnyErr(patterns, "")
	return err
}

func matchAny(patterns []string, name string) bool {
	ok, _ := matchAnyErr(patterns, name)
	return ok
}

func matchAnyErr(patterns []string, name string) (bool, error) {
	for _, p := range patterns {
		ok, err := path.Match(p, name)
		if err != nil {
			return false, fmt.Errorf("bad tool filter pattern %q: %w", p, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// Filter is the rule of bridge.Tools.Filter: patterns are globs as for Selected, those
// starting with "!" excluding. It returns whether name is kept; ok is false when a pattern
// is malformed, and then nothing is kept (a typo in a deny pattern must not let through
// the tools it aimed at).
func Filter(patterns []string) (keep func(name string) bool, ok bool) {
	var include, exclude []string
	for _, p := range patterns {
		if rest, ok := strings.CutPrefix(p, "!"); ok {
			exclude = append(exclude, rest)
		} else {
			include = append(include, p)
		}
	}
	if CheckPatterns(include) != nil || CheckPatterns(exclude) != nil {
		return nil, false
	}
	return func(name string) bool { return Selected(include, exclude, name) }, true
}
