package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// skillReport is one skill as probe, skills and serve show it: its entry (metadata only; no
// file is read to make it) and what it costs a model.
type skillReport struct {
	Server      string   `json:"server"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	URI         string   `json:"uri"`
	Files       []string `json:"files,omitempty"` // paths inside the skill, SKILL.md first
	Bytes       int64    `json:"bytes"`           // the manifest's sizes, summed (0: dynamic)
	Dynamic     bool     `json:"dynamic,omitempty"`
	// IndexTokens is what the skill's line of the skill index costs; FileTokens estimates
	// its files (bytes / 4) from the manifest, as they are not read to list them.
	IndexTokens int `json:"indexTokens"`
	FileTokens  int `json:"fileTokens,omitempty"`
}

// skillReports describes s's skills.
func skillReports(s *bridge.Server, tc *tokens.Counter) []skillReport {
	var out []skillReport
	for _, sk := range s.Skills().Skills() {
		r := skillReport{Server: s.ID(), Name: sk.Name, Description: redact.OneLine(sk.Description), URI: sk.URI,
			Bytes: sk.Size(), Dynamic: sk.Dynamic, FileTokens: int(sk.Size() / 4)}
		r.IndexTokens = tc.Count("- " + sk.Name + ": " + r.Description + "\n")
		for _, f := range sk.Files {
			r.Files = append(r.Files, strings.TrimPrefix(f.URI, sk.Dir()))
		}
		out = append(out, r)
	}
	return out
}

// skillLines are probe's and skills' lines for reports.
func skillLines(reports []skillReport) []string {
	var out []string
	for _, r := range reports {
		size := "dynamic (no manifest)"
		if !r.Dynamic {
			size = fmt.Sprintf("%d files, %s bytes, ~%s tokens", len(r.Files), thousands(int(r.Bytes)), thousands(r.FileTokens))
		}
		out = append(out, fmt.Sprintf("%s: %s [%s; index %s tokens]", r.Name, redact.Line(r.Description, 120), size, thousands(r.IndexTokens)))
	}
	return out
}

// runSkills lists the skills of FILE's servers, or prints one, loaded and verified.
func runSkills(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	fl.skills = true
	set, failed, err := connectAll(ctx, env, fl, args[0])
	if err != nil {
		return err
	}
	defer set.Close()
	tc := tokens.New()
	if len(args) == 1 {
		var all []skillReport
		for _, s := range set.Servers() {
			all = append(all, skillReports(s, tc)...)
		}
		if fl.json {
			if all == nil {
				all = []skillReport{}
			}
			if err := writeJSON(env, all); err != nil {
				return err
			}
		} else {
			for _, s := range set.Servers() {
				lines := skillLines(skillReports(s, tc))
				if len(lines) == 0 {
					continue
				}
				fmt.Fprintf(env.stdout, "%s\n", s.ID())
				for _, l := range lines {
					fmt.Fprintf(env.stdout, "  %s\n", l)
				}
			}
			env.stderr.println(fmt.Sprintf("%d skills; the index costs %s tokens (o200k_base)", len(all), thousands(tc.Count(bridge.SkillsPrompt(set.Servers(), tc.Count, 1<<30)))))
		}
		if failed > 0 {
			return &exitError{code: exitFailed, err: fmt.Errorf("%d server(s) failed; their skills are missing", failed)}
		}
		return nil
	}
	server, name, qualified := strings.Cut(args[1], "/")
	if !qualified {
		server, name = "", args[1]
	}
	var found []*bridge.Server
	for _, s := range set.Servers() {
		if _, ok := s.Skills().Lookup(name); ok && (server == "" || s.ID() == server) {
			found = append(found, s)
		}
	}
	switch {
	case len(found) == 0:
		return &exitError{code: exitFailed, err: fmt.Errorf("no server of %s has a skill %s", args[0], redact.Quote(args[1], 100))}
	case len(found) > 1:
		return usageErr("servers %s and %s both have a skill %s: name it SERVER/SKILL", found[0].ID(), found[1].ID(), redact.Quote(name, 100))
	}
	loaded, err := found[0].Skills().Load(ctx, name)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if fl.json {
		return writeJSON(env, map[string]any{"server": loaded.Server, "skill": loaded.Skill, "body": loaded.Body, "tokens": tc.Count(loaded.Text)})
	}
	fmt.Fprint(env.stdout, loaded.Text)
	env.stderr.println(fmt.Sprintf("%s/%s: %s tokens as the model reads it (o200k_base); verified against the manifest", loaded.Server, loaded.Skill.Name, thousands(tc.Count(loaded.Text))))
	return nil
}

// writeJSON prints v as one indented JSON document.
func writeJSON(env *cliEnv, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := env.stdout.Write(terminalJSON(buf.Bytes()))
	return err
}
