// Command bench regenerates BENCHMARKS.md from one run of the benchmarks on the current
// tree, stamped with the commit, so that no table in it can be older than the code:
//
//	cd integration && npm ci && cd ..   # once: the TypeScript SDK client
//	go run ./integration/bench          # from the repository root; about 6–8 minutes
//
// It builds the test binaries of ./integration and ./bridge, runs BenchmarkVsSDKs,
// BenchmarkCallRatio, BenchmarkAssembly, BenchmarkMemory, BenchmarkFlatten,
// BenchmarkValidate, TestLoad, BenchmarkUpfrontTokens, bridge's BenchmarkHandlerHooks and
// bridge/toolsearch's and bridge/tokens' benchmarks, and the many-users benchmarks
// (users.go: BenchmarkUsers, BenchmarkUsersExpiry, BenchmarkReplicas) and BenchmarkScale (scale.go:
// a host with hundreds of servers) one after another, and
// writes every table of BENCHMARKS.md from their output. -quick runs each with a fraction
// of the work (a smoke test of the pipeline; its numbers mean little), -out writes
// elsewhere, -raw keeps the benchmarks' own output next to it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "BENCHMARKS.md", "file to write")
	quick := flag.Bool("quick", false, "a short smoke run (numbers not meaningful)")
	raw := flag.String("raw", "", "also write the benchmarks' own output to this file")
	from := flag.String("from", "", "render from a -raw file of an earlier run instead of running (for the renderer's own checks)")
	flag.Parse()
	var err error
	if *from != "" {
		err = renderFrom(*from, *out)
	} else {
		err = run(context.Background(), *out, *raw, *quick)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// results holds the metrics of every benchmark line: name (without the -GOMAXPROCS
// suffix) → unit → value.
type results map[string]map[string]float64

func (r results) get(name, unit string) (float64, bool) {
	v, ok := r[name][unit]
	return v, ok
}

// step is one run of a test binary.
type step struct {
	pkg  string // a directory under the root: "integration", "bridge/toolsearch", ...
	args []string
}

func run(ctx context.Context, outPath, rawPath string, quick bool) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "integration", "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return errors.New("the TypeScript SDK is not installed: run `npm ci` in integration/ first")
	}
	tmp, err := os.MkdirTemp("", "mcpbridge-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	started := time.Now().UTC()
	load0 := loadAverage()
	for _, pkg := range []string{"integration", "integration/tracing", "bridge/toolsearch", "bridge/tokens"} {
		logf("building ./%s test binary", pkg)
		if err := command(ctx, root, nil, "go", "test", "-c", "-o", filepath.Join(tmp, testBinary(pkg)), "./"+pkg).Run(); err != nil {
			return fmt.Errorf("go test -c ./%s: %w", pkg, err)
		}
	}
	bt := func(full, short string) string {
		if quick {
			return short
		}
		return full
	}
	steps := []step{
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkVsSDKs$", "-test.benchtime", bt("7x", "1x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkCallRatio$", "-test.benchtime", bt("3000x", "200x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkAssembly$", "-test.benchtime", bt("61x", "2x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkMemory$", "-test.benchtime", bt("2x", "1x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^Benchmark(Flatten|Validate)$", "-test.benchmem", "-test.benchtime", bt("1s", "1x")}},
		{"integration", []string{"-test.run", "^TestLoad$", "-test.v"}},
		{"integration/tracing", []string{"-test.run", "^$", "-test.bench", "^BenchmarkHandlerHooks$", "-test.benchmem", "-test.benchtime", bt("1s", "100x")}},
		{"integration", []string{"-test.run", "^$", "-test.bench", "^BenchmarkUpfrontTokens$", "-test.benchtime", "1x"}},
		{"bridge/toolsearch", []string{"-test.run", "^$", "-test.bench", "^BenchmarkQuality$", "-test.benchtime", "1x"}},
		{"bridge/toolsearch", []string{"-test.run", "^$", "-test.bench", "^BenchmarkSearch$", "-test.benchmem", "-test.benchtime", bt("3000x", "100x")}},
		{"bridge/toolsearch", []string{"-test.run", "^$", "-test.bench", "^BenchmarkNew$", "-test.benchmem", "-test.benchtime", bt("10x", "1x")}},
		{"bridge/toolsearch", []string{"-test.run", "^$", "-test.bench", "^BenchmarkIndex$", "-test.benchmem", "-test.benchtime", bt("10x", "1x")}},
		{"bridge/toolsearch", []string{"-test.run", "^$", "-test.bench", "^BenchmarkSearchP99$", "-test.benchtime", bt("20x", "1x")}},
		{"bridge/tokens", []string{"-test.run", "^$", "-test.bench", "^BenchmarkSweep$", "-test.benchmem", "-test.benchtime", bt("5x", "1x")}},
	}
	steps = append(steps, usersSteps(bt)...)
	steps = append(steps, scaleSteps()...)
	var all bytes.Buffer
	for _, s := range steps {
		logf("%s: %s", s.pkg, strings.Join(s.args, " "))
		cmd := command(ctx, filepath.Join(root, filepath.FromSlash(s.pkg)), []string{"CI=true"}, filepath.Join(tmp, testBinary(s.pkg)), s.args...)
		var buf bytes.Buffer
		cmd.Stdout = io.MultiWriter(&buf, os.Stderr)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", s.pkg, strings.Join(s.args, " "), err)
		}
		all.Write(buf.Bytes())
	}
	if rawPath != "" {
		if err := os.WriteFile(rawPath, all.Bytes(), 0o644); err != nil {
			return err
		}
	}
	res := parse(all.Bytes())
	load := parseLoad(all.Bytes())
	info := stamp(ctx, root, started, time.Since(started), load0, loadAverage(), quick)
	md, err := render(res, load, info)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(outPath) {
		outPath = filepath.Join(root, outPath)
	}
	if err := os.WriteFile(outPath, []byte(md), 0o644); err != nil {
		return err
	}
	logf("wrote %s in %s", outPath, time.Since(started).Round(time.Second))
	return nil
}

// renderFrom writes outPath from the saved output of an earlier run.
func renderFrom(rawPath, outPath string) error {
	b, err := os.ReadFile(rawPath)
	if err != nil {
		return err
	}
	in := info{commit: "unknown (rendered from " + rawPath + ")", date: "unknown", duration: "unknown",
		goVersion: runtime.Version(), cpu: cpuModel(), cores: runtime.NumCPU(), loadStart: "unknown", loadEnd: loadAverage()}
	md, err := render(parse(b), parseLoad(b), in)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, []byte(md), 0o644)
}

// testBinary is the file name of pkg's test binary.
func testBinary(pkg string) string { return strings.ReplaceAll(pkg, "/", "_") + ".test" }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...) }

func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// repoRoot finds the module root (the directory of go.mod for github.com/ttalk/mcpbridge).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/ttalk/mcpbridge\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the mcpbridge repository")
		}
		dir = parent
	}
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark lines: name, iterations, then value-unit pairs.
func parse(out []byte) results {
	res := results{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procSuffix.ReplaceAllString(strings.TrimSpace(f[0]), "")
		m := map[string]float64{}
		for _, pair := range f[2:] {
			vu := strings.Fields(pair)
			if len(vu) != 2 {
				continue
			}
			if v, err := strconv.ParseFloat(vu[0], 64); err == nil {
				m[vu[1]] = v
			}
		}
		res[name] = m
	}
	return res
}

// loadRun is what TestLoad logged.
type loadRun struct {
	connect string
	rates   [][2]string // subtest, "N calls in D (R calls/s)"
	total   string
}

var (
	loadRunLine = regexp.MustCompile(`^=== (?:RUN|NAME|CONT)\s+TestLoad/(\S+)`)
	loadConnect = regexp.MustCompile(`Connect of (\d+) servers took (\S+)`)
	loadCalls   = regexp.MustCompile(`(\d+) calls in (\S+) \((\d+) calls/s\)`)
	loadTotal   = regexp.MustCompile(`^--- PASS: TestLoad \((\S+)\)`)
)

func parseLoad(out []byte) loadRun {
	var lr loadRun
	current := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := loadRunLine.FindStringSubmatch(line); m != nil {
			current = strings.ReplaceAll(m[1], "_", " ")
		}
		if m := loadConnect.FindStringSubmatch(line); m != nil {
			lr.connect = fmt.Sprintf("%s servers: %s", m[1], m[2])
		}
		if m := loadCalls.FindStringSubmatch(line); m != nil {
			lr.rates = append(lr.rates, [2]string{current, fmt.Sprintf("%s calls in %s (%s calls/s)", m[1], m[2], m[3])})
		}
		if m := loadTotal.FindStringSubmatch(line); m != nil {
			lr.total = m[1]
		}
	}
	return lr
}

// info is the stamp of a run.
type info struct {
	commit, dirty, date, duration, goVersion, goSDK, node, tsSDK, tsClient, cpu, loadStart, loadEnd string
	cores                                                                                           int
	quick                                                                                           bool
}

func stamp(ctx context.Context, root string, started time.Time, took time.Duration, load0, load1 string, quick bool) info {
	outOf := func(name string, args ...string) string {
		b, err := command(ctx, root, nil, name, args...).Output()
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(string(b))
	}
	in := info{
		commit:    outOf("git", "rev-parse", "--short=12", "HEAD"),
		date:      started.Format("2006-01-02 15:04 MST"),
		duration:  took.Round(time.Second).String(),
		goVersion: runtime.Version(),
		goSDK:     outOf("go", "list", "-m", "-f", "{{.Version}}", "github.com/modelcontextprotocol/go-sdk"),
		node:      outOf("node", "--version"),
		cores:     runtime.NumCPU(),
		cpu:       cpuModel(),
		loadStart: load0,
		loadEnd:   load1,
		quick:     quick,
	}
	if outOf("git", "status", "--porcelain", "--untracked-files=no") != "" {
		in.dirty = " plus uncommitted changes"
	}
	in.tsSDK = npmVersion(root, "sdk")
	in.tsClient = npmVersion(root, "client")
	return in
}

// npmVersion returns the installed version of the npm package @modelcontextprotocol/<name>
// in integration/node_modules, or "".
func npmVersion(root, name string) string {
	b, err := os.ReadFile(filepath.Join(root, "integration", "node_modules", "@modelcontextprotocol", name, "package.json"))
	if err != nil {
		return ""
	}
	if m := regexp.MustCompile(`"version":\s*"([^"]+)"`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// keys returns m's keys in order.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
