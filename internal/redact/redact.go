// Package redact masks secrets in what mcpbridge prints, logs and returns as errors.
//
// A secret, in mcpbridge's model, is a header value, an environment value, the userinfo of
// a URL, every query value and every bare query key (https://h/mcp?sk-live-abc carries its
// key as a bare key), and a command-line argument that looks like a credential (see
// [Args]). Everything that shows a server's configuration goes through this package, so the
// rules live in one place: the bridge's ServerConfig.String, GoString and LogValue, the
// CLI's output, and the HTTP transport's endpoint and error scrubbing.
//
// Masking is one-way and coarse on purpose: a masked value is [Mask], whatever its length,
// so output never hints at a secret's size or prefix.
//
// The package also holds the module's one set of helpers for untrusted text (a server's
// error, an authorization server's answer) put into errors, logs and statuses: [OneLine],
// [Clip], [Line], [Clean], [Quote], [ASCII] and [Controls].
package redact

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Mask is what a secret is replaced with.
const Mask = "***"

// URL returns raw with its userinfo, every query value and every bare query key replaced
// by [Mask] and its fragment removed; query key names that carry a value and their order are
// kept. A string that does not parse as a URL is replaced entirely, since it may hold
// anything.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Mask
	}
	hadUser := u.User != nil
	u.User = nil
	u.RawQuery = Query(u.RawQuery)
	u.ForceQuery = false
	u.Fragment, u.RawFragment = "", ""
	s := u.String()
	if g, err := url.Parse(s); err != nil || g.User != nil || g.String() != s {
		return Mask // a path net/url cannot round-trip ("// @" reads back as userinfo)
	}
	if hadUser {
		// url.User would percent-encode the mask; put it in by hand after the scheme.
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[:i+3] + Mask + "@" + s[i+3:]
		} else {
			return Mask
		}
	}
	return s
}

// Query masks a raw query string: "k=v" becomes "k=***" and a bare key (which may itself be
// the secret) becomes "***". Order and separators are kept.
func Query(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + Mask
		} else if p != "" {
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

// Keys renders a map of secrets (environment, headers) as "{K1=***,K2=***}", keys sorted.
func Keys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k+"="+Mask)
	}
	slices.Sort(keys)
	return "{" + strings.Join(keys, ",") + "}"
}

// URLSecrets returns the strings of u that must never be shown: the raw query, each query
// value and bare key (raw and unescaped), and the userinfo's name and password.
func URLSecrets(u *url.URL) []string {
	var s []string
	add := func(v string) {
		if v == "" {
			return
		}
		s = append(s, v)
		if uv, err := url.QueryUnescape(v); err == nil && uv != v && uv != "" {
			s = append(s, uv)
		}
	}
	if q := u.RawQuery; q != "" {
		s = append(s, q)
		for p := range strings.SplitSeq(q, "&") {
			if _, v, ok := strings.Cut(p, "="); ok {
				add(v)
			} else {
				add(p)
			}
		}
	}
	if u.User != nil {
		s = append(s, u.User.Username())
		if pw, ok := u.User.Password(); ok {
			s = append(s, pw)
		}
	}
	return slices.DeleteFunc(s, func(v string) bool { return v == "" })
}

// MinSecretLen is the length below which [String] and [Error] leave a secret in place:
// masking every "a" or "1" in a message would make it unreadable and hide nothing.
const MinSecretLen = 3

// String returns s with every occurrence of each secret (of at least [MinSecretLen] bytes)
// replaced by [Mask]. Longer secrets are replaced first, so a secret that contains another
// is masked whole.
func String(s string, secrets []string) string {
	if s == "" || len(secrets) == 0 {
		return s
	}
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		if len(sec) >= MinSecretLen && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return s
}

// Error returns err unchanged unless its text contains a secret; then it returns an error
// whose text has the secrets masked (see [String]). The original error is not reachable
// from the result, since it would print the secret, but context cancellation and deadline
// errors stay recognisable with errors.Is, and a net.Error's Timeout is kept.
func Error(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	masked := String(msg, secrets)
	if masked == msg {
		return err
	}
	re := &maskedError{msg: masked}
	switch {
	case errors.Is(err, context.Canceled):
		re.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		re.cause = context.DeadlineExceeded
	}
	var ne net.Error
	re.timeout = errors.As(err, &ne) && ne.Timeout()
	return re
}

// maskedError is an error whose text had secrets masked. It implements net.Error.
type maskedError struct {
	msg     string
	cause   error // a context error, or nil
	timeout bool
}

func (e *maskedError) Error() string   { return e.msg }
func (e *maskedError) Unwrap() error   { return e.cause }
func (e *maskedError) Timeout() bool   { return e.timeout }
func (e *maskedError) Temporary() bool { return false }
