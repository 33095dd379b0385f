package bridge

import (
	"context"
	"errors"

	"github.com/ttalk/mcpbridge/internal/callheaders"
	"github.com/ttalk/mcpbridge/internal/redact"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/results"
)

// Secrets a server may quote back. A server's error messages, its stderr and its tool errors
// are text the bridge did not write: a server may quote the Authorization header it was
// sent, echo its environment, or put an API key in a JSON-RPC error. Every secret the bridge
// knows of a server is masked ("***") wherever such text leaves the bridge: in the errors of
// calls and start-up (Handler, Invoke, CallTool, ReadResource, Ping, Set.Failed, OnStatus,
// CallEnd.Err) and in every log line of the server's logger. The secrets are those of the
// configuration (URL userinfo and query values, header values and their credentials,
// environment values, credential arguments, the OAuth client secrets and private key), the
// OAuth access tokens the transport sent, and the per-call headers of the call at hand
// (WithCallHeaders).

// secretBook is the secret book of one server (internal/redact), with the masking of
// the bridge's own error types.
type secretBook struct{ *redact.Book }

func newSecretBook(cfg ServerConfig) *secretBook {
	s := redact.ConfigSecrets(cfg.URL, cfg.Headers, cfg.Env, cfg.Args)
	if a := cfg.Auth; a != nil {
		s = redact.WithJSONSpellings(append(s, a.ClientSecret, a.PrivateKey, a.IdPClientSecret))
	}
	return &secretBook{redact.NewBook(s, callheaders.Secrets)}
}

// maskErr returns err with every secret of the server (and of ctx's per-call headers) masked
// in its text; err itself when it shows none. The result keeps what callers inspect: a
// *ServerError stays one (Server and Phase kept), a *results.ToolError stays one (its Text
// masked), errors.Is sees the whole original chain (sentinels carry no secret), and
// errors.As finds a *jsonrpc.Error or a *results.ToolError (copies with their text masked:
// redact.Hide).
func (b *secretBook) maskErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	secrets := b.List(ctx)
	if !showsSecret(err, secrets) {
		return err
	}
	return scrubErr(err, secrets)
}

// maskCall is maskErr for the outcome of a call: when err had to be masked, so has the
// text the caller gets with it (a tool error's text is the error's).
func (b *secretBook) maskCall(ctx context.Context, err error, text *string) error {
	if err == nil {
		return nil
	}
	m := b.maskErr(ctx, err)
	if m != err && *text != "" {
		*text = redact.String(*text, b.List(ctx))
	}
	return m
}

// showsSecret reports whether err's text, or the stderr a *ServerError carries, holds one
// of secrets.
func showsSecret(err error, secrets []string) bool {
	text := err.Error()
	var se *ServerError
	if errors.As(err, &se) {
		text += se.Stderr
	}
	return redact.String(text, secrets) != text
}

func scrubErr(err error, secrets []string) error {
	switch e := err.(type) {
	case *ServerError:
		c := *e
		c.Stderr = redact.String(e.Stderr, secrets)
		if e.Err != nil {
			if t := e.Err.Error(); redact.String(t, secrets) != t {
				c.Err = scrubErr(e.Err, secrets)
			}
		}
		return &c
	case *hookError:
		return &hookError{scrubErr(e.ServerError, secrets).(*ServerError)}
	case *results.ToolError:
		return &results.ToolError{Text: redact.String(e.Text, secrets)}
	case *DeniedError:
		return &DeniedError{Tool: e.Tool, Reason: redact.String(e.Reason, secrets)}
	}
	return redact.Hide(err, secrets, session.SentByServer, func(orig error, target any, mask func(string) string) bool {
		t, ok := target.(**results.ToolError)
		var te *results.ToolError
		if !ok || !errors.As(orig, &te) {
			return false
		}
		*t = &results.ToolError{Text: mask(te.Text)}
		return true
	})
}
