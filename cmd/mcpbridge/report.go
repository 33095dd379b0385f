package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeReport prints the probe report for people: a summary line, then one block per server
// in config order. Every line is stable apart from timings.
func writeReport(w io.Writer, rep *probeReport) error {
	tw := tabwriter.NewWriter(w, 12, 0, 2, ' ', 0)
	s := rep.Summary
	fmt.Fprintf(tw, "%s: %d of %d servers ok, %d model-visible tools, %s tokens of tool definitions (o200k_base)\n",
		escapeLine(rep.File), s.OK, s.Servers, s.Tools, thousands(s.Tokens))
	if rep.Error != "" {
		fmt.Fprintf(tw, "not run: %s\n", escapeLine(rep.Error))
	}
	for _, sr := range rep.Servers {
		fmt.Fprintln(tw)
		status := "ok"
		if sr.Error != nil {
			status = "FAILED"
		}
		fmt.Fprintf(tw, "%s  %s\n", escapeLine(sr.ID), status)
		// Every value printed is one line of server or config text: escaped.
		row := func(key string, lines ...string) {
			for i, l := range lines {
				if i > 0 {
					key = ""
				}
				fmt.Fprintf(tw, "  %s\t%s\n", key, escapeLine(l))
			}
		}
		row("config", sr.Config)
		if sr.Source != "" {
			row("defined at", sr.Source)
		}
		if sr.Transport != "" {
			row("transport", sr.Transport)
		}
		row("timings", timings(sr))
		if sr.ServerName != "" || sr.ServerVersion != "" {
			v := strings.TrimSpace(sr.ServerName + " " + sr.ServerVersion)
			if sr.ProtocolVersion != "" {
				v += ", protocol " + sr.ProtocolVersion
				if sr.Negotiation != "" {
					v += " (" + sr.Negotiation + ")"
				}
			}
			row("server", v)
		}
		if e := sr.Error; e != nil {
			row("failed in", e.Phase)
			row("error", e.Message)
			if len(e.Stderr) > 0 {
				lines := make([]string, len(e.Stderr))
				for i, l := range e.Stderr {
					lines[i] = "| " + l
				}
				row("stderr tail", lines...)
			}
			continue
		}
		if sr.Auth != nil {
			row("auth", authLine(sr.Auth, time.Now()))
		}
		c := sr.Counts
		row("tools", fmt.Sprintf("%d model-visible, %d app-only, %d MCP App", c.ModelVisible, c.AppOnly, c.App))
		if len(sr.Tools) > 0 {
			row("model sees", wrapList(sr.Tools, 80)...)
		}
		if len(sr.AppOnly) > 0 {
			row("app-only", wrapList(sr.AppOnly, 80)...)
		}
		var apps []string
		for _, a := range sr.AppTools {
			apps = append(apps, a.Name+" → "+a.ResourceURI)
		}
		if len(apps) > 0 {
			row("App tools", apps...)
		}
		if sr.Tasks != "" || len(sr.TaskTools) > 0 {
			row("tasks", cmp.Or(sr.Tasks, "not offered by the server"))
		}
		var taskTools []string
		for _, t := range sr.TaskTools {
			taskTools = append(taskTools, t.Tool+" ("+t.Support+")")
		}
		if len(taskTools) > 0 {
			row("task tools", wrapList(taskTools, 80)...)
		}
		var renamed []string
		for _, r := range sr.Renamed {
			renamed = append(renamed, fmt.Sprintf("%s → %s: %s", r.Remote, r.Name, r.Reason))
		}
		if len(renamed) > 0 {
			row("renamed", renamed...)
		}
		var probs []string
		for _, p := range sr.Problems {
			tag := p.Source
			if p.Skipped {
				tag += ", skipped"
			}
			if p.Tool == "" { // about the server, not one tool
				probs = append(probs, fmt.Sprintf("[%s]: %s", tag, p.Problem))
				continue
			}
			probs = append(probs, fmt.Sprintf("%s [%s]: %s", p.Tool, tag, p.Problem))
		}
		if len(probs) > 0 {
			row("problems", probs...)
		}
		if len(sr.Providers) > 0 {
			row("providers", providerLines(sr.Providers)...)
		}
		row("tokens", tokenLine(sr))
		if sr.Instructions != "" {
			row("instructions", instructionLines(sr)...)
		}
		if len(sr.Skills) > 0 {
			row("skills", skillLines(sr.Skills)...)
		}
	}
	return tw.Flush()
}

func timings(sr serverReport) string {
	var parts []string
	for _, t := range sr.Timings {
		parts = append(parts, t.Phase+" "+fmtDur(t.d))
	}
	parts = append(parts, "total "+fmtDur(time.Duration(sr.ElapsedMs)*time.Millisecond))
	return strings.Join(parts, ", ")
}

// wrapList joins items with ", " in lines of about width bytes.
func wrapList(items []string, width int) []string {
	var lines []string
	var cur strings.Builder
	for i, it := range items {
		sep := ", "
		if i == len(items)-1 {
			sep = ""
		}
		if cur.Len() > 0 && cur.Len()+len(it)+len(sep) > width {
			lines = append(lines, strings.TrimRight(cur.String(), " "))
			cur.Reset()
		}
		cur.WriteString(it + sep)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// tokenLine is a server's token cost: the total, then its three largest tools.
func tokenLine(sr serverReport) string {
	line := fmt.Sprintf("%s (o200k_base) for %d tool definition", thousands(sr.Tokens), len(sr.ToolTokens))
	if len(sr.ToolTokens) != 1 {
		line += "s"
	}
	big := slices.Clone(sr.ToolTokens)
	slices.SortStableFunc(big, func(a, b toolCount) int { return b.Tokens - a.Tokens })
	var parts []string
	for _, t := range big[:min(3, len(big))] {
		parts = append(parts, fmt.Sprintf("%s %s", t.Name, thousands(t.Tokens)))
	}
	if len(big) > 1 {
		line += "; largest: " + strings.Join(parts, ", ")
	}
	return line
}

// instructionLines shows a server's instructions: their cost, then at most six lines of at
// most 100 characters (row escapes them).
func instructionLines(sr serverReport) []string {
	const maxLines, maxRunes = 6, 100
	out := []string{fmt.Sprintf("%s tokens, untrusted text from the server:", thousands(sr.InstructionsTokens))}
	lines := strings.Split(sr.Instructions, "\n")
	for i, l := range lines {
		if i == maxLines {
			out = append(out, fmt.Sprintf("… %d more lines", len(lines)-maxLines))
			break
		}
		if r := []rune(l); len(r) > maxRunes {
			l = string(r[:maxRunes]) + "…"
		}
		out = append(out, strings.TrimRight("| "+l, " "))
	}
	return out
}

// thousands writes n with comma separators: 138,332.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
