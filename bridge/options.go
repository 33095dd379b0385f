package bridge

import (
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/results"
)

// Defaults used when Options and ServerConfig leave a field zero.
const (
	DefaultConnectTimeout = 60 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	DefaultMaxResultBytes = results.DefaultMaxBytes
)

// protocolVersion is pinned so go-sdk skips its server/discover probe, which legacy servers
// ignore (Connect would wait for the whole timeout) or exit on (go-sdk issue #1177).
const protocolVersion = "2025-11-25"

// options is Options with every default filled in; Connect copies the caller's Options once.
type options struct {
	Options
	logger *slog.Logger
}

func resolve(o *Options) *options {
	r := &options{}
	if o != nil {
		r.Options = *o
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	r.logger = r.Logger
	if r.ConnectTimeout <= 0 {
		r.ConnectTimeout = DefaultConnectTimeout
	}
	if r.CallTimeout <= 0 {
		r.CallTimeout = DefaultCallTimeout
	}
	if r.MaxResultBytes == 0 {
		r.MaxResultBytes = DefaultMaxResultBytes
	}
	if r.ClientInfo == nil {
		r.ClientInfo = &mcp.Implementation{Name: "mcpbridge", Version: moduleVersion()}
	}
	return r
}

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/ttalk/mcpbridge" && d.Version != "" {
				return d.Version
			}
		}
		if bi.Main.Path == "github.com/ttalk/mcpbridge" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return "devel"
}

func (o *options) connectTimeout(c ServerConfig) time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return o.ConnectTimeout
}

func (o *options) callTimeout(c ServerConfig) time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return o.CallTimeout
}
