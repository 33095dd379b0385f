package main

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/redact"
)

// secretList holds every secret of the servers file once it is read, so that nothing the
// CLI writes shows one, whoever produced the text: a server's stderr lines, its error
// messages, a tool's result. The library masks what it knows in its errors and logs; this
// is the CLI's own last line, over stdout, stderr and the final error.
type secretList struct {
	mu      sync.Mutex
	secrets []string
}

// addServers adds the secrets of cfgs: URL userinfo and query values, header values and
// their credentials, environment values, credential arguments, OAuth client secrets and
// private keys.
func (l *secretList) addServers(cfgs []bridge.ServerConfig) {
	var s []string
	for _, c := range cfgs {
		s = append(s, redact.ConfigSecrets(c.URL, c.Headers, c.Env, c.Args)...)
		if a := c.Auth; a != nil {
			s = append(s, redact.WithJSONSpellings([]string{a.ClientSecret, a.PrivateKey, a.IdPClientSecret})...)
		}
	}
	l.mu.Lock()
	l.secrets = append(l.secrets, s...)
	l.mu.Unlock()
}

func (l *secretList) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.secrets
}

// mask returns p with every secret masked; p itself when it shows none.
func (l *secretList) mask(p []byte) []byte {
	secrets := l.list()
	if len(secrets) == 0 {
		return p
	}
	if s := redact.String(string(p), secrets); s != string(p) {
		return []byte(s)
	}
	return p
}

// maskErr returns err with its text masked, keeping its exit code.
func (l *secretList) maskErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	masked := redact.String(msg, l.list())
	if masked == msg {
		return err
	}
	ee := &exitError{code: exitUsage, err: errors.New(masked)}
	var orig *exitError
	if errors.As(err, &orig) {
		ee.code, ee.quiet = orig.code, orig.quiet
	}
	return ee
}

// maskWriter writes to w with the secrets of l masked. Each Write is masked as a whole, so
// a secret is found when one Write carries it (the CLI writes whole values and lines).
type maskWriter struct {
	w io.Writer
	l *secretList
}

func (m *maskWriter) Write(p []byte) (int, error) {
	q := m.l.mask(p)
	if bytes.Equal(q, p) {
		return m.w.Write(p)
	}
	if _, err := m.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}
