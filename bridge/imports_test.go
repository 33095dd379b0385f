package bridge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The module's dependency direction (issue 32; ../shared/DESIGN.md "Layout and dependency
// direction"), checked against what `go list -deps` says the packages import:
//
//   - internal/session, internal/tasks, internal/wire, bridge/auth and bridge/config never
//     import bridge (they are what bridge composes);
//   - internal/wire imports no other package of the module but internal/jsonstr, the one
//     JSON string encoder (a leaf);
//   - transport, results and apps never import bridge (or a package under it) or each other
//     (transport may import internal/wire, its direct client).
//
// and, from the same picture, the packages bridge composes or that sit beside it never
// import bridge either (internal/telemetry, internal/redact, internal/jsonstr,
// internal/schemaguard, internal/expose, internal/catalog, bridge/toolsearch,
// bridge/redisstore, which imports bridge/auth only).
//
// A package of the rules (required) that does not exist yet is skipped, except under
// CI=true, where every one must exist; the others are checked when they exist.

const module = "github.com/ttalk/mcpbridge"

// importRule is one package's rule: the packages of the module it must not depend on
// (directly or not), or, with only set, the only ones it may depend on.
type importRule struct {
	pkg    string   // path below the module
	not    []string // forbidden; a trailing "/..." forbids the package and those under it
	only   []string // when set: the only packages of the module it may depend on
	reason string
	extra  bool // not one of the rules: checked only when the package exists
}

var importRules = []importRule{
	{pkg: "internal/session", not: []string{"bridge"}, reason: "bridge composes the session layer"},
	{pkg: "internal/tasks", not: []string{"bridge"}, reason: "bridge composes the tasks client"},
	{pkg: "internal/wire", not: []string{"bridge"}, reason: "the direct client is a leaf"},
	{pkg: "internal/wire", only: []string{"internal/jsonstr"}, reason: "the direct client is a leaf (jsonstr is the one JSON string encoder)"},
	{pkg: "bridge/auth", not: []string{"bridge"}, reason: "bridge aliases the auth types"},
	{pkg: "bridge/config", not: []string{"bridge"}, reason: "bridge aliases ServerConfig"},
	{pkg: "transport", not: []string{"bridge/...", "results", "apps"}, reason: "transport, results and apps are leaves"},
	{pkg: "results", not: []string{"bridge/...", "transport", "apps"}, reason: "transport, results and apps are leaves"},
	{pkg: "apps", not: []string{"bridge/...", "transport", "results"}, reason: "transport, results and apps are leaves"},
	{pkg: "internal/telemetry", not: []string{"bridge"}, reason: "bridge composes it", extra: true},
	{pkg: "internal/redact", not: []string{"bridge/..."}, reason: "a leaf every package may use", extra: true},
	{pkg: "internal/jsonstr", only: []string{}, reason: "a leaf every package may use", extra: true},
	{pkg: "internal/schemaguard", not: []string{"bridge"}, reason: "bridge composes it", extra: true},
	{pkg: "internal/expose", not: []string{"bridge"}, reason: "bridge composes it", extra: true},
	{pkg: "internal/callwatch", not: []string{"bridge"}, reason: "bridge composes it", extra: true},
	{pkg: "internal/catalog", not: []string{"bridge"}, reason: "bridge composes the catalogue", extra: true},
	{pkg: "bridge/toolsearch", not: []string{"bridge"}, reason: "the index knows no bridge type", extra: true},
	{pkg: "bridge/redisstore", not: []string{"bridge"}, reason: "the Redis store imports bridge/auth only", extra: true},
}

// listedPackage is the part of `go list -json` output the rules read.
type listedPackage struct {
	ImportPath string
	Deps       []string // every package it depends on, transitively
	Module     *struct{ Path string }
}

func TestImportRules(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	goBin, err := exec.LookPath("go")
	if err != nil {
		if ci {
			t.Fatal("no go command to run go list")
		}
		t.Skip("no go command to run go list")
	}
	cmd := exec.Command(goBin, "list", "-deps", "-json", "./...")
	cmd.Dir = ".." // the module root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./...: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]listedPackage{} // by path below the module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if rel, ok := below(p.ImportPath); ok {
			pkgs[rel] = p
		}
	}
	if _, ok := pkgs["bridge"]; !ok {
		t.Fatalf("go list did not list %s/bridge", module)
	}
	for _, r := range importRules {
		p, ok := pkgs[r.pkg]
		if !ok {
			if ci && !r.extra {
				t.Errorf("%s does not exist (CI=true: every package of the import rules must)", r.pkg)
			} else {
				t.Logf("%s does not exist yet: its rule is skipped", r.pkg)
			}
			continue
		}
		for _, dep := range p.Deps {
			rel, ok := below(dep)
			if !ok {
				continue
			}
			if r.only != nil && !slices.Contains(r.only, rel) {
				t.Errorf("%s depends on %s: it may depend on no package of the module but %s (%s)", r.pkg, rel, strings.Join(r.only, ", "), r.reason)
			}
			for _, n := range r.not {
				if rel == strings.TrimSuffix(n, "/...") || strings.HasSuffix(n, "/...") && strings.HasPrefix(rel, strings.TrimSuffix(n, "...")) {
					t.Errorf("%s depends on %s (%s)", r.pkg, rel, r.reason)
				}
			}
		}
	}
}

// below returns path relative to the module root when it is a package of the module.
func below(path string) (string, bool) {
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}
