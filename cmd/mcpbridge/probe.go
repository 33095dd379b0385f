package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/schemaguard"
)

// stderrTailLines is how many lines of a failed stdio server's stderr the report shows.
const stderrTailLines = 10

// probeReport is the --json document of probe; the text report shows the same data.
type probeReport struct {
	File     string       `json:"file"`
	OK       bool         `json:"ok"`
	Summary  probeSummary `json:"summary"`
	Warnings []string     `json:"warnings,omitempty"`
	// Error is why Connect refused to run at all (a required server failed).
	Error   string         `json:"error,omitempty"`
	Servers []serverReport `json:"servers"`
}

type probeSummary struct {
	Servers int `json:"servers"`
	OK      int `json:"ok"`
	Failed  int `json:"failed"`
	// Tools is the number of model-visible tools of the whole set.
	Tools int `json:"tools"`
	// Tokens is what every model-visible tool definition together costs, in o200k_base
	// tokens (bridge/tokens).
	Tokens int `json:"tokens"`
}

type serverReport struct {
	ID              string            `json:"id"`
	Status          string            `json:"status"` // "ok" or "failed"
	Config          string            `json:"config"` // ServerConfig.String(): secrets as ***
	Source          string            `json:"source,omitempty"`
	Transport       string            `json:"transport,omitempty"`
	ElapsedMs       int64             `json:"elapsedMs"` // start of probe until this server finished
	Timings         []timingReport    `json:"timings,omitempty"`
	ServerName      string            `json:"serverName,omitempty"`
	ServerVersion   string            `json:"serverVersion,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	Negotiation     string            `json:"negotiation,omitempty"` // how ProtocolVersion was reached
	Counts          *toolCounts       `json:"counts,omitempty"`
	Tools           []string          `json:"tools,omitempty"`     // model-visible names
	AppOnly         []string          `json:"appOnly,omitempty"`   // remote names hidden from the model
	AppTools        []appTool         `json:"appTools,omitempty"`  // model-visible MCP App tools
	Tasks           string            `json:"tasks,omitempty"`     // what the server offers for MCP tasks
	TaskTools       []bridge.TaskTool `json:"taskTools,omitempty"` // tools that declare task support
	Renamed         []bridge.Rename   `json:"renamed,omitempty"`
	Problems        []problem         `json:"problems,omitempty"`
	Providers       []targetReport    `json:"providers,omitempty"` // per model API field: tools rejected as sent and after adapting
	// Tokens is what the server's model-visible tool definitions cost, in o200k_base
	// tokens; ToolTokens says it per tool, in listing order.
	Tokens     int         `json:"tokens"`
	ToolTokens []toolCount `json:"toolTokens,omitempty"`
	// Instructions are the server's instructions (untrusted; control characters escaped,
	// bounded), and InstructionsTokens what they cost in a system prompt.
	Instructions       string `json:"instructions,omitempty"`
	InstructionsTokens int    `json:"instructionsTokens,omitempty"`
	// Skills are the server's skills (skills.go): metadata only, with their token costs.
	Skills []skillReport `json:"skills,omitempty"`
	// Auth is the OAuth grant in use (type, access token expiry, whether a refresh token
	// is kept); never a token.
	Auth  *bridge.AuthStatus `json:"auth,omitempty"`
	Error *failure           `json:"error,omitempty"`
}

// toolCount is one tool's definition cost.
type toolCount struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

type timingReport struct {
	Phase string `json:"phase"`
	Ms    int64  `json:"ms"`
	d     time.Duration
}

type toolCounts struct {
	ModelVisible int `json:"modelVisible"`
	AppOnly      int `json:"appOnly"`
	App          int `json:"app"`
}

type appTool struct {
	Name        string `json:"name"`
	ResourceURI string `json:"resourceUri"`
}

// problem is a bridge finding (ServerStatus.Problems); provider lint findings are in
// serverReport.Providers.
type problem struct {
	Tool    string `json:"tool"`   // "" for a finding about the server as a whole
	Source  string `json:"source"` // "bridge"
	Problem string `json:"problem"`
	Skipped bool   `json:"skipped,omitempty"`
}

type failure struct {
	Phase   string   `json:"phase"`
	Message string   `json:"message"`
	Stderr  []string `json:"stderr,omitempty"` // last lines of a stdio server's stderr
}

func runProbe(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	path := args[0]
	con := env.stderr
	level := slog.LevelWarn
	if fl.verbose {
		level = slog.LevelDebug
	}
	log := newLogger(con, level)
	cfgs, warnings, err := readConfig(env, path, log)
	if err != nil {
		return err
	}
	// The report covers what the bridge warns about (skipped servers, renames, schema
	// problems), so its logger shows only errors unless -v.
	bridgeLevel := slog.LevelError
	if fl.verbose {
		bridgeLevel = slog.LevelDebug
	}

	p := newProgress(con, cfgs, path)
	start := time.Now()
	p.start()
	set, cerr := bridge.Connect(ctx, cfgs, &bridge.Options{
		Logger:         newLogger(con, bridgeLevel),
		ConnectTimeout: fl.timeout,
		Skills:         true, // probe lists skills too (metadata only)
		OnStatus: func(_ context.Context, st bridge.ServerStatus) {
			p.done(st, time.Since(start))
		},
	})
	if set != nil {
		defer set.Close()
	}
	p.stop()

	rep := buildReport(path, cfgs, set, p.results(), tokens.New())
	rep.Warnings = warnings
	if cerr != nil && ctx.Err() == nil {
		rep.Error = redact.OneLine(cerr.Error())
	}
	if fl.json {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		if _, err := env.stdout.Write(terminalJSON(buf.Bytes())); err != nil {
			return err
		}
	} else if err := writeReport(env.stdout, rep); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	}
	if !rep.OK {
		return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d servers failed", rep.Summary.Failed, rep.Summary.Servers)}
	}
	return nil
}

// progress shows the servers finishing on the console and keeps their statuses.
type progress struct {
	con   *console
	cfgs  []bridge.ServerConfig
	path  string // the servers file, for login hints
	mu    sync.Mutex
	got   map[string]probed
	begin time.Time
	quit  chan struct{}
	wg    sync.WaitGroup
}

// probed is one server's OnStatus value and when it came.
type probed struct {
	st      bridge.ServerStatus
	elapsed time.Duration
}

func newProgress(con *console, cfgs []bridge.ServerConfig, path string) *progress {
	return &progress{con: con, cfgs: cfgs, path: path, got: map[string]probed{}, quit: make(chan struct{})}
}

// start draws the status line and, on a terminal, keeps its clock ticking until stop.
func (p *progress) start() {
	p.begin = time.Now()
	p.redraw()
	if !p.con.tty {
		return
	}
	p.wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.redraw()
			}
		}
	})
}

func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
	p.con.setStatus("")
}

func (p *progress) redraw() {
	p.mu.Lock()
	n := len(p.got)
	var waiting []string
	for _, c := range p.cfgs {
		if _, ok := p.got[c.ID]; !ok {
			waiting = append(waiting, c.ID)
		}
	}
	p.mu.Unlock()
	if n == len(p.cfgs) {
		p.con.setStatus("")
		return
	}
	s := fmt.Sprintf("connecting %d/%d… %s", n, len(p.cfgs), fmtDur(time.Since(p.begin).Truncate(100*time.Millisecond)))
	if w := escapeLine(strings.Join(waiting, ", ")); len(w) <= 60 {
		s += "  waiting for " + w
	} else {
		s += fmt.Sprintf("  waiting for %d servers", len(waiting))
	}
	p.con.setStatus(p.con.paint(ansiFaint, s))
}

// done records one server's outcome and prints its progress line.
func (p *progress) done(st bridge.ServerStatus, elapsed time.Duration) {
	p.mu.Lock()
	p.got[st.ID] = probed{st: st, elapsed: elapsed}
	p.mu.Unlock()
	var line string
	if st.Err != nil {
		line = fmt.Sprintf("%s %s  %s: %s", p.con.paint(ansiRed, "✗"), escapeLine(st.ID), st.Err.Phase, escapeLine(redact.OneLine(errText(st.Err, p.path))))
	} else {
		line = fmt.Sprintf("%s %s  %d tools  %s", p.con.paint(ansiGreen, "✓"), escapeLine(st.ID), len(st.ModelTools), fmtDur(elapsed))
		if st.Auth != nil {
			line += "  " + authLine(st.Auth, time.Now())
		}
	}
	p.con.println(line)
	p.redraw()
}

func (p *progress) results() map[string]probed {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]probed, len(p.got))
	maps.Copy(out, p.got)
	return out
}

// errText is the cause of a server failure, without the "mcp server ...: phase:" framing;
// for a server that needs a login, just that and the command to run (loginHint).
func errText(e *bridge.ServerError, path string) string {
	if e.Err == nil {
		return e.Error()
	}
	msg := e.Err.Error()
	if errors.Is(e.Err, bridge.ErrNeedsLogin) {
		if i := strings.Index(msg, bridge.ErrNeedsLogin.Error()+":"); i > 0 {
			msg = msg[i:]
		}
		msg += loginHint(e, path)
	}
	return msg
}

// loginHint is what the CLI adds to the error of a server that needs a login: the command
// that fixes it ("" for other errors). The library's error says why, never what to run.
func loginHint(e *bridge.ServerError, path string) string {
	if !errors.Is(e, bridge.ErrNeedsLogin) {
		return ""
	}
	return fmt.Sprintf("; run `mcpbridge login %s %s`", path, e.Server)
}

// buildReport assembles the report in config order. Live servers report Server.Status() and
// their final tools (names after clashes across servers); failed ones the value OnStatus got.
// set is nil when Connect refused to run (a required server failed).
func buildReport(path string, cfgs []bridge.ServerConfig, set *bridge.Set, got map[string]probed, tc *tokens.Counter) *probeReport {
	rep := &probeReport{File: path, Servers: []serverReport{}}
	var all bridge.Tools
	for _, cfg := range cfgs {
		pr, ok := got[cfg.ID]
		st := pr.st
		if !ok {
			st = bridge.ServerStatus{ID: cfg.ID, Err: &bridge.ServerError{Server: cfg.ID, Phase: bridge.PhaseStart, Err: errors.New("no status reported (interrupted?)")}}
		}
		var tools bridge.Tools
		if st.Err == nil && set != nil {
			if s, found := set.Lookup(cfg.ID); found && s.ID() == cfg.ID {
				st, tools = s.Status(), s.Tools()
			}
		}
		sr := serverReport{
			ID:              cfg.ID,
			Config:          strings.TrimPrefix(cfg.String(), cfg.ID),
			Source:          cfg.Source,
			Transport:       st.Transport,
			ElapsedMs:       pr.elapsed.Milliseconds(),
			ServerName:      st.ServerName,
			ServerVersion:   st.ServerVersion,
			ProtocolVersion: st.ProtocolVersion,
			Negotiation:     st.Negotiation,
			Renamed:         st.Renamed,
		}
		sr.Config = strings.TrimSuffix(strings.TrimPrefix(sr.Config, "("), ")")
		for _, t := range st.Timings {
			sr.Timings = append(sr.Timings, timingReport{Phase: string(t.Phase), Ms: t.Duration.Milliseconds(), d: t.Duration})
		}
		if st.Err != nil {
			sr.Status = "failed"
			sr.Error = &failure{Phase: string(st.Err.Phase), Message: errText(st.Err, path), Stderr: lastLines(st.Stderr, stderrTailLines)}
			rep.Summary.Failed++
		} else {
			sr.Status = "ok"
			rep.Summary.OK++
			sr.Counts = &toolCounts{ModelVisible: len(st.ModelTools), AppOnly: len(st.AppOnly)}
			if tools != nil {
				sr.Counts.ModelVisible = len(tools) // with the tools exposing resources and prompts
			}
			sr.AppOnly = st.AppOnly
			sr.Tasks, sr.TaskTools = st.Tasks, st.TaskTools
			for _, t := range tools {
				sr.Tools = append(sr.Tools, t.Name)
				if t.UIResource != "" {
					sr.Counts.App++
					sr.AppTools = append(sr.AppTools, appTool{Name: t.Name, ResourceURI: t.UIResource})
				}
			}
			if n := st.NonProtocolLines; n > 0 {
				sr.Problems = append(sr.Problems, problem{Source: "bridge", Problem: fmt.Sprintf("%d non-protocol lines on stdout (skipped; the server should write logs to stderr)", n)})
			}
			for _, pb := range st.Problems {
				sr.Problems = append(sr.Problems, problem{Tool: pb.Tool, Source: "bridge", Problem: pb.Problem, Skipped: pb.Skipped})
			}
			sr.Problems = append(sr.Problems, compileProblems(tools, st.Problems)...)
			sr.Providers = lintProviders(tools)
			for _, t := range tools {
				n := tc.Tool(t)
				sr.ToolTokens = append(sr.ToolTokens, toolCount{Name: t.Name, Tokens: n})
				sr.Tokens += n
			}
			sr.Instructions = st.Instructions
			if st.Instructions != "" {
				sr.InstructionsTokens = tc.Count(st.Instructions)
			}
			sr.Auth = st.Auth
			if s, found := set.Lookup(cfg.ID); found {
				sr.Skills = skillReports(s, tc)
			}
			all = append(all, tools...)
		}
		rep.Servers = append(rep.Servers, sr)
	}
	rep.Summary.Servers = len(cfgs)
	rep.Summary.Tools = len(all)
	for _, sr := range rep.Servers {
		rep.Summary.Tokens += sr.Tokens
	}
	rep.OK = rep.Summary.Failed == 0
	return rep
}

// compileProblems compiles the inputSchema of each tool the bridge reported nothing about.
// The bridge compiles an inputSchema on its tool's first call (most listed tools are never
// called), so a schema that cannot validate arguments shows in Status only after a call;
// probe compiles them now, so the operator sees it before any.
func compileProblems(tools bridge.Tools, reported []bridge.ToolProblem) []problem {
	seen := make(map[string]bool, len(reported))
	for _, pb := range reported {
		seen[pb.Tool] = true
	}
	var out []problem
	for _, t := range tools {
		if seen[t.Name] || len(t.Parameters) == 0 {
			continue
		}
		if _, err := schemaguard.Compile(t.Parameters); err != nil {
			out = append(out, problem{Tool: t.Name, Source: "bridge", Problem: schemaguard.NotCompiledProblem("inputSchema", err)})
		}
	}
	return out
}
