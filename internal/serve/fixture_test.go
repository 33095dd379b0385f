package serve_test

import (
	"testing"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/serve"
	"github.com/ttalk/mcpbridge/internal/serve/servetest"
)

func fixtureServer(t *testing.T, csp map[string]any) string { return servetest.FixtureServer(t, csp) }

func startHost(t *testing.T, cfgs []bridge.ServerConfig) *serve.Host {
	return servetest.StartHost(t, cfgs)
}

func startAskHost(t *testing.T) *serve.Host { return servetest.StartAskHost(t) }
