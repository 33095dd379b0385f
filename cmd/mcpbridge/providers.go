package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/provider"
	"github.com/ttalk/mcpbridge/bridge/tokens"
)

// Provider lint in probe: per target (a model API field), which tools it rejects as the
// server sent them and which it still rejects after the opt-in adaptation. The rules live
// in bridge/provider, shared with the adapter.

// targetReport is one target's verdict on one server's tools.
type targetReport struct {
	Target string `json:"target"`
	// Rejected counts tools the API is expected to reject as the server sent them.
	Rejected int `json:"rejected"`
	// LeftAfterAdapting counts tools still rejected after adaptation (tools --format with
	// --strict, --adapt or --gemini-parameters); those are sent non-strict, or in Gemini's
	// parametersJsonSchema, instead.
	LeftAfterAdapting int        `json:"leftAfterAdapting"`
	Tools             []toolLint `json:"tools,omitempty"`
}

// toolLint is what one target rejects in one tool.
type toolLint struct {
	Tool      string             `json:"tool"`
	Findings  []provider.Finding `json:"findings"`
	Remaining []provider.Finding `json:"remaining,omitempty"` // after adapting
}

// lintProviders checks tools against every target.
func lintProviders(tools bridge.Tools) []targetReport {
	out := make([]targetReport, 0, len(provider.Targets()))
	for _, target := range provider.Targets() {
		tr := targetReport{Target: string(target)}
		for _, t := range tools {
			fs := provider.Lint(t, target)
			if len(fs) == 0 {
				continue
			}
			tr.Rejected++
			tl := toolLint{Tool: t.Name, Findings: fs}
			if a, err := provider.Adapt(t.Parameters, target); err != nil {
				tl.Remaining = fs
			} else {
				tl.Remaining = a.Remaining
			}
			if len(tl.Remaining) > 0 {
				tr.LeftAfterAdapting++
			}
			tr.Tools = append(tr.Tools, tl)
		}
		out = append(out, tr)
	}
	return out
}

// providerLines is the "providers" block of the text report: one line per target, and for
// tools still rejected after adapting, which and why.
func providerLines(trs []targetReport) []string {
	var lines, ok []string
	for _, tr := range trs {
		if tr.Rejected == 0 {
			ok = append(ok, tr.Target)
		}
	}
	if len(ok) > 0 {
		lines = append(lines, "accepted as sent: "+strings.Join(ok, ", "))
	}
	for _, tr := range trs {
		if tr.Rejected == 0 {
			continue
		}
		var rules []provider.Finding
		for _, tl := range tr.Tools {
			rules = append(rules, tl.Findings...)
		}
		l := fmt.Sprintf("%s: %d tool%s rejected as sent (%s); ", tr.Target, tr.Rejected, plural(tr.Rejected), provider.Summary(rules))
		if tr.LeftAfterAdapting == 0 {
			l += "all fixed by adapting"
		} else {
			l += fmt.Sprintf("%d left after adapting", tr.LeftAfterAdapting)
		}
		lines = append(lines, l)
		shown := 0
		for _, tl := range tr.Tools {
			if len(tl.Remaining) == 0 {
				continue
			}
			if shown == maxLeftShown {
				lines = append(lines, fmt.Sprintf("  … and %d more (see --json)", tr.LeftAfterAdapting-shown))
				break
			}
			shown++
			var why []string
			for _, f := range tl.Remaining {
				why = append(why, strings.TrimPrefix(f.String(), string(f.Target)+": "))
			}
			lines = append(lines, fmt.Sprintf("  %s: %s", tl.Tool, strings.Join(why, "; ")))
		}
	}
	return lines
}

// maxLeftShown caps the tools listed per target in the text report.
const maxLeftShown = 5

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// formatTools is "mcpbridge tools --format F": the tool list exactly as that model API's
// request carries it, on stdout; what was adapted and what is still rejected goes to stderr.
func formatTools(env *cliEnv, fl *cliFlags, tools bridge.Tools, tc *tokens.Counter) error {
	format, err := provider.ParseFormat(fl.format)
	if err != nil {
		return usageErr("tools: %v", err)
	}
	if fl.strict && format != provider.FormatOpenAI && format != provider.FormatOpenAIResponses {
		return usageErr("tools: --strict is for --format openai or openai-responses")
	}
	if fl.geminiParameters && format != provider.FormatGemini {
		return usageErr("tools: --gemini-parameters is for --format gemini")
	}
	opts := &provider.Options{Strict: fl.strict, Adapt: fl.adapt, GeminiParameters: fl.geminiParameters}
	if fl.deferMode != "" {
		opts.Defer = &provider.Deferral{Search: provider.SearchMode(fl.deferMode), Count: tc.Count}
	}
	ts, err := provider.New(format, tools, opts)
	if err != nil {
		if opts.Defer != nil {
			return usageErr("tools: --defer %s: %v", fl.deferMode, err)
		}
		return err
	}
	b, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	for _, r := range ts.Reports() {
		if r.Fallback != "" {
			env.stderr.println(fmt.Sprintf("%s: sent with %s: %s", r.Tool, r.Fallback, findingsText(r.Remaining)))
		} else if len(r.Remaining) > 0 {
			env.stderr.println(fmt.Sprintf("%s: %s may still reject it: %s", r.Tool, r.Target, findingsText(r.Remaining)))
		}
	}
	if _, err = fmt.Fprintf(env.stdout, "%s\n", b); err != nil {
		return err
	}
	env.stderr.println(fmt.Sprintf("%d tools, %s tokens in the %s tools array (o200k_base)", ts.Len(), thousands(tc.JSON(b)), format))
	if opts.Defer != nil {
		up, err := ts.Upfront()
		if err != nil {
			return err
		}
		env.stderr.println(fmt.Sprintf("deferred: the model reads %s tokens before it searches", thousands(tc.JSON(up))))
	}
	return nil
}

func findingsText(fs []provider.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = strings.TrimPrefix(f.String(), string(f.Target)+": ")
	}
	return strings.Join(slices.Compact(parts), "; ")
}
