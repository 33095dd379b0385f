package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/bridge/tokens"
	"github.com/ttalk/mcpbridge/results"
)

// connectAll loads FILE and connects every server with the CLI's logger, which shows the
// bridge's warnings (skipped servers, renames) on stderr. failed counts skipped servers.
func connectAll(ctx context.Context, env *cliEnv, fl *cliFlags, path string) (set *bridge.Set, failed int, err error) {
	return connectSome(ctx, env, fl, path, nil)
}

// connectSome is connectAll of the servers choose keeps (nil: all).
func connectSome(ctx context.Context, env *cliEnv, fl *cliFlags, path string, choose func([]bridge.ServerConfig) []bridge.ServerConfig) (set *bridge.Set, failed int, err error) {
	level := slog.LevelWarn
	if fl.verbose {
		level = slog.LevelDebug
	}
	log := newLogger(env.stderr, level)
	servers, _, err := readConfig(env, path, log)
	if err != nil {
		return nil, 0, err
	}
	if choose != nil {
		servers = choose(servers)
	}
	set, err = bridge.Connect(ctx, servers, &bridge.Options{Logger: log, ConnectTimeout: fl.timeout, Skills: fl.skills})
	switch {
	case ctx.Err() != nil:
		if set != nil {
			_ = set.Close()
		}
		return nil, 0, &exitError{code: exitFailed, err: fmt.Errorf("interrupted: %w", context.Cause(ctx))}
	case err != nil: // a required server failed, or the IDs are invalid: the error says which
		return nil, 0, &exitError{code: exitFailed, err: err}
	}
	return set, len(set.Failed()), nil
}

func runTools(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	if fl.deferMode != "" && fl.format == "" {
		return usageErr("tools: --defer is for --format")
	}
	set, failed, err := connectAll(ctx, env, fl, args[0])
	if err != nil {
		return err
	}
	defer set.Close()
	tools := set.Tools()
	tc := tokens.New()
	if fl.format != "" {
		if err := formatTools(env, fl, tools, tc); err != nil {
			return err
		}
	} else if fl.json {
		b, err := json.Marshal(listedTools(tools))
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(env.stdout, "%s\n", terminalJSON(b)); err != nil {
			return err
		}
		env.stderr.println(fmt.Sprintf("%d tools, %s tokens (o200k_base)", len(tools), thousands(modelTokens(tools, tc))))
	} else if err := writeTools(env.stdout, tools, tc); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("%d server(s) failed; their tools are missing", failed)}
	}
	return nil
}

// listedTool is one tool as tools --json prints it: json.Marshal of the Tool (name,
// description, parameters: what the model sees) and then the ID of the server it comes from,
// so a host that stores the list can index it by server (bridge.Tool.ServerID).
type listedTool struct {
	bridge.Tool
	Server string `json:"server,omitempty"`
}

// listedTools are tools as tools --json prints them: "[]" for none, not "null".
func listedTools(tools bridge.Tools) []listedTool {
	out := make([]listedTool, len(tools))
	for i, t := range tools {
		out[i] = listedTool{Tool: t, Server: t.ServerID}
		if out[i].Server == "" && t.Server != nil {
			out[i].Server = t.Server.ID()
		}
	}
	return out
}

// modelTokens is what the tools cost a model as definitions: json.Marshal of them, without
// the server names tools --json adds.
func modelTokens(tools bridge.Tools, tc *tokens.Counter) int {
	b, err := json.Marshal(tools)
	if err != nil {
		return 0
	}
	return tc.JSON(b)
}

// writeTools prints the tools for people: name, server and token cost, the description, the
// parameters; then the total.
func writeTools(w io.Writer, tools bridge.Tools, tc *tokens.Counter) error {
	var b strings.Builder
	var total int
	for i, t := range tools {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s", escapeLine(t.Name))
		if t.Server != nil {
			fmt.Fprintf(&b, "  (server %s", escapeLine(t.Server.ID()))
			if t.RemoteName != t.Name {
				fmt.Fprintf(&b, ", remote name %q", t.RemoteName)
			}
			b.WriteString(")")
		}
		n := tc.Tool(t)
		total += n
		fmt.Fprintf(&b, "  %s tokens\n", thousands(n))
		for l := range strings.SplitSeq(strings.TrimSpace(t.Description), "\n") {
			fmt.Fprintf(&b, "    %s\n", escapeText(l, true))
		}
		fmt.Fprintf(&b, "  parameters: %s\n", escapeLine(paramSummary(t.Parameters)))
	}
	if len(tools) == 0 {
		b.WriteString("no model-visible tools\n")
	} else {
		fmt.Fprintf(&b, "\n%d tools, %s tokens of definitions (o200k_base)\n", len(tools), thousands(total))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// paramSummary describes a parameters schema in one line: "path: string (required), n: integer".
// Properties keep the server's order.
func paramSummary(raw json.RawMessage) string {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return string(raw)
	}
	names, props := orderedKeys(top.Properties)
	if len(names) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, n := range names {
		var p struct {
			Type any `json:"type"`
		}
		_ = json.Unmarshal(props[i], &p)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		switch t := p.Type.(type) {
		case string:
			b.WriteString(": " + t)
		case []any:
			for j, x := range t {
				if j == 0 {
					b.WriteString(": ")
				} else {
					b.WriteString("|")
				}
				fmt.Fprint(&b, x)
			}
		}
		if slices.Contains(top.Required, n) {
			b.WriteString(" (required)")
		}
	}
	return b.String()
}

// orderedKeys returns the keys and raw values of a JSON object in document order.
func orderedKeys(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, vals
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, vals
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals
}

func runCall(ctx context.Context, env *cliEnv, fl *cliFlags, args []string) error {
	path, name, input := args[0], args[1], "{}"
	if len(args) > 2 {
		input = args[2]
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(input), &obj); err != nil || obj == nil {
		return usageErr("call: arguments must be a JSON object, like '{\"path\": \"/tmp\"}'")
	}
	cache := readToolCache(env, fl.cache)
	owner, remote := toolOwner(name, cache)
	var tool *bridge.Tool
	var tools bridge.Tools
	var set *bridge.Set
	var err error
	if owner != "" { // dial only the server that owns the tool
		one := func(cfgs []bridge.ServerConfig) []bridge.ServerConfig {
			for _, c := range cfgs {
				if c.ID == owner {
					return []bridge.ServerConfig{c}
				}
			}
			return cfgs // not a server of FILE: dial all
		}
		if set, _, err = connectSome(ctx, env, fl, path, one); err != nil {
			return err
		}
		narrowed := len(set.Servers())+len(set.Failed()) == 1
		tools = set.Tools()
		for i := range tools {
			if t := &tools[i]; t.Name == name || narrowed && t.Server.ID() == owner && t.RemoteName == remote {
				tool = t
				break
			}
		}
		if tool == nil && narrowed {
			_ = set.Close()
			set = nil // a stale cache, or a tool not on that server: dial all
		}
	}
	if set == nil {
		if set, _, err = connectAll(ctx, env, fl, path); err != nil {
			return err
		}
		tools = set.Tools()
		for i := range tools {
			if tools[i].Name == name {
				tool = &tools[i]
				break
			}
		}
		if fl.cache != "" {
			writeToolCache(env, fl.cache, tools)
		}
	}
	defer set.Close()
	if tool == nil {
		for _, t := range tools {
			if t.RemoteName == name {
				return usageErr("call: no tool %q; the model sees it as %q (server %s)", name, t.Name, t.Server.ID())
			}
		}
		if failed := set.Failed(); len(failed) > 0 {
			// The tool may be on a server that was skipped (one that needs a login, say):
			// that is a failed server (exit 2), and its error says what to do.
			errs := make([]error, len(failed))
			for i, f := range failed {
				errs[i] = f
				if h := loginHint(f, path); h != "" {
					errs[i] = fmt.Errorf("%w%s", f, h)
				}
			}
			return &exitError{code: exitFailed, err: fmt.Errorf("call: tool %q not found; %d server(s) failed, so their tools are unknown:\n%w", name, len(failed), errors.Join(errs...))}
		}
		return usageErr("call: no model-visible tool %q (see: mcpbridge tools %s)", name, path)
	}
	watch := &callWatch{con: env.stderr}
	text, err := tool.Handler(bridge.WithProgress(ctx, watch.progress), json.RawMessage(input))
	watch.end()
	if err != nil && ctx.Err() != nil {
		return &exitError{code: exitFailed, err: watch.interrupted(err)}
	}
	var terr *results.ToolError
	if errors.As(err, &terr) {
		fmt.Fprintln(env.stdout, escapeText(terr.Text, true))
		return &exitError{code: exitFailed, err: fmt.Errorf("tool %q reported an error (the text above is what the model reads)", name)}
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	_, err = fmt.Fprintln(env.stdout, escapeText(text, true))
	return err
}
