package integration

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
)

// readPins returns package.json's dependencies and package-lock.json's installed versions.
func readPins(t *testing.T) (deps, locked map[string]string) {
	t.Helper()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	for file, v := range map[string]any{"package.json": &pkg, "package-lock.json": &lock} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	locked = make(map[string]string)
	for path, p := range lock.Packages {
		if name, ok := strings.CutPrefix(path, "node_modules/"); ok && !strings.Contains(name, "/node_modules/") {
			locked[name] = p.Version
		}
	}
	return pkg.Dependencies, locked
}

// TestPinnedVersions checks that package.json pins exact versions that package-lock.json
// installs. It needs no node_modules.
func TestPinnedVersions(t *testing.T) {
	deps, locked := readPins(t)
	for _, pkg := range allPackages {
		v, ok := deps[pkg]
		if !ok {
			t.Errorf("package.json does not depend on %s", pkg)
			continue
		}
		if strings.ContainsAny(v, "^~<>=* x") || v == "" || v == "latest" {
			t.Errorf("package.json: %s %q is not an exact version", pkg, v)
		}
		if locked[pkg] != v {
			t.Errorf("package-lock.json has %s %q, package.json pins %q", pkg, locked[pkg], v)
		}
	}
}

// TestServersYAML loads servers.yaml with the bridge's own loader and checks it names the
// suite's servers, in order, started with npx at the versions package.json pins.
func TestServersYAML(t *testing.T) {
	cfgs, err := bridge.LoadConfig("servers.yaml")
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	deps, _ := readPins(t)
	want := []struct {
		id, pkg string
		extra   []string
	}{
		{"everything", pkgEverything, []string{"stdio"}},
		{"filesystem", pkgFilesystem, []string{"/tmp"}},
		{"memory", pkgMemory, nil},
		{"basic-vanillajs", pkgBasicVanillaJS, []string{"--stdio"}},
		{"system-monitor", pkgSystemMonitor, []string{"--stdio"}},
	}
	if len(cfgs) != len(want) {
		t.Fatalf("servers.yaml has %d servers %v, want %d", len(cfgs), cfgs, len(want))
	}
	for i, w := range want {
		c := cfgs[i]
		wantArgs := append([]string{"-y", w.pkg + "@" + deps[w.pkg]}, w.extra...)
		if c.ID != w.id || c.Command != "npx" || !slices.Equal(c.Args, wantArgs) ||
			(c.Type != "" && c.Type != bridge.TypeStdio) {
			t.Errorf("server %d = %v, want %s: npx %v", i, c, w.id, wantArgs)
		}
	}
	if _, ok := cfgs[2].Env["MEMORY_FILE_PATH"]; !ok {
		t.Errorf("memory server has no MEMORY_FILE_PATH in its env: %v", cfgs[2])
	}
}
