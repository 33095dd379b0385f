package integration

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
)

var (
	updateSweep      = flag.Bool("update-sweep", false, "rewrite the compatibility table in bridge/provider/doc.go from this sweep")
	updateSweepTools = flag.Bool("update-sweep-tools", false, "rewrite "+sweepToolsFile+" from this sweep")
)

// sweepServer is one popular npm MCP server of the compatibility sweep, pinned in
// integration/sweep/package.json. Env values are placeholders, not credentials: they only
// let servers that check for a token at start-up get as far as listing their tools.
type sweepServer struct {
	id, pkg string
	bin     string // the bin to run when the package has several; "" for its only one
	args    []string
	env     map[string]string
}

const placeholder = "placeholder-not-a-secret"

var sweepServers = []sweepServer{
	{id: "github", pkg: "@modelcontextprotocol/server-github", env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": placeholder}},
	{id: "gitlab", pkg: "@modelcontextprotocol/server-gitlab", env: map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": placeholder}},
	{id: "gitlab-zereight", pkg: "@zereight/mcp-gitlab", env: map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": placeholder}},
	{id: "slack", pkg: "@modelcontextprotocol/server-slack", env: map[string]string{"SLACK_BOT_TOKEN": placeholder, "SLACK_TEAM_ID": placeholder}},
	{id: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", env: map[string]string{"BRAVE_API_KEY": placeholder}},
	{id: "google-maps", pkg: "@modelcontextprotocol/server-google-maps", env: map[string]string{"GOOGLE_MAPS_API_KEY": placeholder}},
	{id: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking"},
	{id: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer"},
	{id: "playwright", pkg: "@playwright/mcp"},
	{id: "chrome-devtools", pkg: "chrome-devtools-mcp", bin: "chrome-devtools-mcp"},
	{id: "notion", pkg: "@notionhq/notion-mcp-server"},
	{id: "sentry", pkg: "@sentry/mcp-server", args: []string{"--access-token=" + placeholder}},
	{id: "supabase", pkg: "@supabase/mcp-server-supabase", args: []string{"--access-token=" + placeholder}},
	{id: "context7", pkg: "@upstash/context7-mcp"},
	{id: "kubernetes", pkg: "mcp-server-kubernetes"},
	{id: "azure", pkg: "@azure/mcp", args: []string{"server", "start"}},
	{id: "hubspot", pkg: "@hubspot/mcp-server", env: map[string]string{"PRIVATE_APP_ACCESS_TOKEN": placeholder}},
	{id: "circleci", pkg: "@circleci/mcp-server-circleci", env: map[string]string{"CIRCLECI_TOKEN": placeholder}},
	{id: "desktop-commander", pkg: "@wonderwhy-er/desktop-commander", bin: "desktop-commander"},
	{id: "firecrawl", pkg: "firecrawl-mcp", env: map[string]string{"FIRECRAWL_API_KEY": placeholder}},
	{id: "tavily", pkg: "tavily-mcp", env: map[string]string{"TAVILY_API_KEY": placeholder}},
	{id: "exa", pkg: "exa-mcp-server", env: map[string]string{"EXA_API_KEY": placeholder}},
}

// TestSweep probes every server of the sweep through the bridge and records, per server,
// whether it connects, how many tools it offers and what each model API would reject (as
// sent → after adapting) in the table in bridge/provider's package doc. Opt-in, since
// it installs a lot: integration/sweep/run. Without -update-sweep it fails when the result
// differs from the table, so a regression against real servers shows.
func TestSweep(t *testing.T) {
	if os.Getenv("MCPBRIDGE_SWEEP") == "" {
		t.Skip("opt-in compatibility sweep: run integration/sweep/run (installs about 20 npm servers)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the sweep needs node: %v", err)
	}
	dir, err := filepath.Abs("sweep")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir() // servers that write settings under $HOME write them here
	var cfgs []bridge.ServerConfig
	versions := map[string]string{}
	for _, sv := range sweepServers {
		bin, version, err := sweepBin(dir, sv)
		if err != nil {
			t.Fatalf("%v (run: npm ci --ignore-scripts in integration/sweep)", err)
		}
		versions[sv.id] = version
		env := map[string]string{"HOME": home, "USERPROFILE": home, "XDG_CONFIG_HOME": home}
		maps.Copy(env, sv.env)
		cfgs = append(cfgs, bridge.ServerConfig{ID: sv.id, Type: bridge.TypeStdio, Command: node,
			Args: append([]string{bin}, sv.args...), Env: env, Dir: home, ConnectTimeout: 90 * time.Second})
	}
	ctx := testContext(t, 5*time.Minute)
	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	failed := map[string]*bridge.ServerError{}
	for _, se := range set.Failed() {
		failed[se.Server] = se
	}

	var b strings.Builder
	b.WriteString("| server | version | status | tools |")
	for _, target := range provider.Targets() {
		b.WriteString(" " + string(target) + " |")
	}
	b.WriteString(" notes |\n|---|---|---|---|")
	for range provider.Targets() {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	var ok, tools int
	for _, sv := range sweepServers {
		fmt.Fprintf(&b, "| %s | %s |", sv.id, versions[sv.id])
		if se := failed[sv.id]; se != nil {
			fmt.Fprintf(&b, " failed (%s) | |", se.Phase)
			for range provider.Targets() {
				b.WriteString(" |")
			}
			fmt.Fprintf(&b, " %s |\n", sweepNote(se, dir, home))
			continue
		}
		srv, found := set.Lookup(sv.id)
		if !found {
			t.Fatalf("server %s neither failed nor connected", sv.id)
		}
		ts := srv.Tools()
		ok++
		tools += len(ts)
		fmt.Fprintf(&b, " ok | %d |", len(ts))
		for _, target := range provider.Targets() {
			var rejected, left int
			for _, tl := range ts {
				if len(provider.Lint(tl, target)) == 0 {
					continue
				}
				rejected++
				if a, err := provider.Adapt(tl.Parameters, target); err != nil || !a.OK() {
					left++
				}
			}
			if rejected == 0 {
				b.WriteString(" 0 |")
			} else {
				fmt.Fprintf(&b, " %d → %d |", rejected, left)
			}
		}
		b.WriteString(" |\n")
	}
	fmt.Fprintf(&b, "\n%d of %d servers connect, %d tools.\n", ok, len(sweepServers), tools)
	checkSweepTools(t, set, versions, home)
	table := b.String()
	t.Logf("sweep:\n%s", table)

	docFile := filepath.Join("..", "bridge", "provider", "doc.go")
	data, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(string(data), sweepBegin), strings.Index(string(data), sweepEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q block", docFile, strings.TrimSpace(sweepBegin), strings.TrimSpace(sweepEnd))
	}
	old := uncommented(string(data[i+len(sweepBegin) : j]))
	if *updateSweep {
		out := string(data[:i+len(sweepBegin)]) + commented(table) + string(data[j:])
		if err := os.WriteFile(docFile, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if withoutNotes(old) != withoutNotes(table) {
		t.Errorf("the sweep differs from %s (a regression, or servers changed: rerun with -update-sweep)\n--- doc\n%s--- now\n%s", docFile, old, table)
	}
}

// The sweep's table sits in the package doc of bridge/provider between these lines, as a
// preformatted block of the doc comment.
const sweepBegin, sweepEnd = "// The sweep's table (integration/sweep/run writes it):\n//\n", "//\n// End of the sweep's table.\n"

// commented turns the table into doc-comment lines: "//\t" before text, "//" for blank lines.
func commented(table string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(strings.TrimSuffix(table, "\n"), "\n") {
		if l == "" {
			b.WriteString("//\n")
		} else {
			b.WriteString("//\t" + l + "\n")
		}
	}
	return b.String()
}

// uncommented is the inverse of commented.
func uncommented(block string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(strings.TrimSuffix(block, "\n"), "\n") {
		l = strings.TrimPrefix(l, "//")
		b.WriteString(strings.TrimPrefix(l, "\t") + "\n")
	}
	return b.String()
}

// sweepBin finds a package's bin script and installed version in dir/node_modules.
func sweepBin(dir string, sv sweepServer) (bin, version string, err error) {
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(sv.pkg))
	data, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", "", fmt.Errorf("package %s not installed: %w", sv.pkg, err)
	}
	var meta struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return "", "", fmt.Errorf("package %s: %w", sv.pkg, err)
	}
	var rel string
	if json.Unmarshal(meta.Bin, &rel) != nil {
		var bins map[string]string
		if err := json.Unmarshal(meta.Bin, &bins); err != nil {
			return "", "", fmt.Errorf("package %s: no bin", sv.pkg)
		}
		if sv.bin != "" {
			rel = bins[sv.bin]
		} else {
			for _, v := range bins { // several names for one script are fine
				if rel != "" && v != rel {
					rel = ""
					break
				}
				rel = v
			}
		}
		if rel == "" {
			return "", "", fmt.Errorf("package %s: name one of its bins %v", sv.pkg, bins)
		}
	}
	return filepath.Join(pkgDir, filepath.FromSlash(rel)), meta.Version, nil
}

// sweepNote is a failure's cause in one short table cell: paths made relative, pipes escaped.
func sweepNote(se *bridge.ServerError, dir, home string) string {
	msg := se.Error()
	if se.Err != nil {
		msg = se.Err.Error()
	}
	if tail := lastNonEmptyLine(se.Stderr); tail != "" {
		msg += "; stderr: " + tail
	}
	msg = strings.NewReplacer(dir, "sweep", home, "$HOME", "|", `\|`, "\n", " ").Replace(msg)
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 160 {
		msg = strings.ToValidUTF8(msg[:160], "") + "…"
	}
	return msg
}

func lastNonEmptyLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// withoutNotes drops the notes column (failure causes vary in wording from run to run).
func withoutNotes(table string) string {
	var out []string
	for l := range strings.SplitSeq(table, "\n") {
		if i := strings.LastIndex(strings.TrimSuffix(l, " |"), " | "); strings.HasPrefix(l, "| ") && i >= 0 {
			l = l[:i]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
