package bridge

import "github.com/ttalk/mcpbridge/bridge/config"

// The servers file and ServerConfig are package bridge/config's; the names here are aliases
// (the os / io/fs precedent) so that hosts need only import bridge.

// ServerConfig is config.ServerConfig: one MCP server, safe to log (see bridge/config).
type ServerConfig = config.ServerConfig

// Transport kinds accepted in ServerConfig.Type and reported in ServerStatus.Transport (see
// bridge/config).
const (
	TypeStdio     = config.TypeStdio
	TypeHTTP      = config.TypeHTTP
	TypeSSE       = config.TypeSSE
	TypeInProcess = config.TypeInProcess
)

// LoadConfig is config.Load: it reads a servers file and returns the enabled servers in file
// order, logging its warnings to slog.Default() (config.Read returns them instead). The file
// format is bridge/config's package documentation.
func LoadConfig(path string) ([]ServerConfig, error) { return config.Load(path) }
