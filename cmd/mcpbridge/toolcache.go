package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ttalk/mcpbridge/bridge"
)

// The listing cache of "mcpbridge call --cache FILE": which server owns each model-visible
// tool, so a call dials that server alone. call writes it whenever it dials every server.
//
//	{"tools": {"echo": {"server": "basic", "remote": "echo"}, ...}}

// maxToolCacheBytes bounds the listing cache call reads; a larger file is ignored.
const maxToolCacheBytes = 1 << 20

type toolCache struct {
	Tools map[string]cachedTool `json:"tools"`
}

type cachedTool struct {
	Server string `json:"server"` // the server ID
	Remote string `json:"remote"` // the tool's name on the server
}

// readToolCache reads path ("" or an unreadable, oversized or malformed file: nil).
func readToolCache(env *cliEnv, path string) *toolCache {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxToolCacheBytes+1))
	if err != nil || len(b) > maxToolCacheBytes {
		env.stderr.println("mcpbridge: ignoring the listing cache " + escapeLine(path) + ": unreadable or over 1 MiB")
		return nil
	}
	var c toolCache
	if json.Unmarshal(b, &c) != nil {
		env.stderr.println("mcpbridge: ignoring the listing cache " + escapeLine(path) + ": not a listing cache")
		return nil
	}
	return &c
}

// toolOwner is the server ID name says owns it and the tool's name on that server: the cache's
// entry, else a SERVER__TOOL prefix; "" when neither says.
func toolOwner(name string, c *toolCache) (server, remote string) {
	if c != nil {
		if t, ok := c.Tools[name]; ok && t.Server != "" {
			return t.Server, t.Remote
		}
	}
	if id, tool, ok := strings.Cut(name, "__"); ok && id != "" && tool != "" {
		return id, tool
	}
	return "", ""
}

// writeToolCache replaces path with the owners of tools (atomically, 0600); a failure is
// said on stderr, the call goes on.
func writeToolCache(env *cliEnv, path string, tools bridge.Tools) {
	c := toolCache{Tools: make(map[string]cachedTool, len(tools))}
	for _, t := range tools {
		if t.Server != nil {
			c.Tools[t.Name] = cachedTool{Server: t.Server.ID(), Remote: t.RemoteName}
		}
	}
	b, err := json.Marshal(c)
	if err == nil {
		err = writeFileAtomic(path, b)
	}
	if err != nil {
		env.stderr.println("mcpbridge: could not write the listing cache: " + escapeLine(err.Error()))
	}
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcpbridge-cache-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
