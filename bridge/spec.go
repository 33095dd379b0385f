package bridge

import (
	"log/slog"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/transport"
)

// transportSpec is the transport's view of a server's configuration.
func transportSpec(cfg ServerConfig, o *options, log *slog.Logger) transport.Spec {
	return transport.Spec{
		HTTPClient:    o.HTTPClient,
		MaxFrameBytes: o.messageLimit(),
		NudgeAfter:    o.NudgeAfter,
		ID:            cfg.ID,
		Kind:          transport.Kind(cfg.Type),
		Command:       cfg.Command,
		Args:          cfg.Args,
		Env:           cfg.Env,
		Dir:           cfg.Dir,
		URL:           cfg.URL,
		Headers:       cfg.Headers,
		InProcess:     cfg.InProcess,
		Logger:        log,
	}
}

// serverHash is the handle frontends use for a server reached over kind k: upstream's
// hash for http and sse, MD5 of command and args for stdio, and for in-process servers
// the upstream form with type "inprocess" and the server ID in place of a URL.
func serverHash(cfg ServerConfig, k transport.Kind) string {
	switch k {
	case transport.KindStdio:
		return apps.StdioHash(cfg.Command, cfg.Args)
	case transport.KindInProcess:
		return apps.ServerHash(string(k), cfg.ID)
	}
	return apps.ServerHash(string(k), cfg.URL)
}
