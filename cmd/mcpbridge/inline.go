package main

import (
	"net/url"
	"path"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
)

// A server given on the command line after "--", in place of a servers file:
//
//	mcpbridge probe -- npx -y @modelcontextprotocol/server-everything
//	mcpbridge call get-sum '{"a": 1, "b": 2}' -- npx -y @modelcontextprotocol/server-everything
//	mcpbridge tools -- https://mcp.example.com/mcp
//
// Every word after "--" is the stdio server's command and its arguments (no shell); one word
// that is an http:// or https:// URL is a remote server (Streamable HTTP, SSE as fallback).

// maxInlineIDBytes bounds a derived server ID, so that "<ID>__<tool>" stays within the
// 64-byte tool names model APIs accept for tools of reasonable names.
const maxInlineIDBytes = 32

// inlineServer is the one server cmdline names.
func inlineServer(cmdline []string) bridge.ServerConfig {
	if len(cmdline) == 1 {
		if u, err := url.Parse(cmdline[0]); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return bridge.ServerConfig{ID: inlineID(urlName(u)), URL: cmdline[0]}
		}
	}
	return bridge.ServerConfig{ID: inlineID(commandName(cmdline)), Command: cmdline[0], Args: cmdline[1:]}
}

// runners are the commands that fetch and run a package named by their first operand.
var runners = map[string]bool{"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true, "dlx": true, "exec": true, "run": true}

// runnerValueFlags are the runners' flags that take the next word as their value.
var runnerValueFlags = map[string]bool{"-p": true, "--package": true, "--from": true, "--with": true, "--python": true, "--registry": true, "--cache": true}

// commandName is the word a stdio server's ID comes from: the package a runner (npx, bunx,
// pnpx, uvx, pipx; npm exec, pnpm dlx, yarn dlx) starts, without scope and version
// (@modelcontextprotocol/server-everything@1.0 → server-everything); the script an
// interpreter runs (node dist/index.js → the directory above a script named index, main or
// server, else the script's name); otherwise the command's own name without directory or
// extension.
func commandName(cmdline []string) string {
	base := func(s string) string {
		s = path.Base(strings.ReplaceAll(s, `\`, "/"))
		if i := strings.LastIndexByte(s, '.'); i > 0 {
			s = s[:i]
		}
		return s
	}
	cmd := strings.ToLower(base(cmdline[0]))
	args := cmdline[1:]
	switch cmd {
	case "npm", "pnpm", "yarn", "pipx":
		if len(args) > 0 && runners[args[0]] {
			args = args[1:]
		}
		cmd = "npx"
	}
	operand := func() string {
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case runnerValueFlags[a]:
				i++
			case strings.HasPrefix(a, "-"):
			default:
				return a
			}
		}
		return ""
	}
	switch cmd {
	case "npx", "bunx", "pnpx", "uvx":
		if p := operand(); p != "" {
			if at := strings.LastIndexByte(p, '@'); at > 0 {
				p = p[:at] // @scope/name@version
			}
			if i := strings.IndexAny(p, "=<>~!["); i > 0 {
				p = p[:i] // name==1.0, name[extra]
			}
			return path.Base(p)
		}
	case "node", "nodejs", "python", "python3", "deno", "bun", "ruby", "tsx", "ts-node":
		if p := operand(); p != "" {
			p = strings.ReplaceAll(p, `\`, "/")
			if n := base(p); n != "index" && n != "main" && n != "server" && n != "__main__" {
				return n
			}
			for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
				if d := path.Base(dir); d != "dist" && d != "build" && d != "src" && d != "lib" && d != "bin" {
					return d
				}
			}
		}
	}
	return cmd
}

// urlName is the word a remote server's ID comes from: the host's first label that is not
// mcp, www or api (mcp.deepwiki.com → deepwiki), the whole host for an IP address.
func urlName(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Trim(host, "0123456789.:[]") == "" {
		return host
	}
	for label := range strings.SplitSeq(host, ".") {
		if label != "mcp" && label != "www" && label != "api" {
			return label
		}
	}
	return host
}

// inlineID makes a derived name a server ID any model API accepts in a tool name prefix:
// lowercase ASCII letters, digits, '-' and '_', no "__" (the prefix separator), at most
// maxInlineIDBytes, "server" when nothing is left. The same command always gives the same ID.
func inlineID(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	id := b.String()
	for strings.Contains(id, "__") {
		id = strings.ReplaceAll(id, "__", "_")
	}
	if len(id) > maxInlineIDBytes {
		id = id[:maxInlineIDBytes]
	}
	id = strings.Trim(id, "-_")
	if id == "" {
		return "server"
	}
	return id
}
