package redact

import (
	"net/url"
	"slices"
	"strings"
)

// Args returns a copy of a command line (a stdio server's arguments) with what looks like a
// secret masked:
//
//   - the value of a flag named like a credential, inline or next: --token=X, --api-key X,
//     -password X, --client_secret=X (names containing token, secret, passw, key, auth,
//     credential, bearer or cookie, or with pat, pass or pw as a word; "--no-..." flags
//     excepted);
//     a following argument that starts with "-" is taken for the next flag and kept;
//   - NAME=VALUE with a credential-like NAME (docker -e GITHUB_TOKEN=X, env-style arguments);
//   - the value of a header given after -H or --header ("Authorization: Bearer X" becomes
//     "Authorization: ***"), and any "Name: value" argument whose Name is credential-like;
//   - "Bearer X" as a whole argument;
//   - URLs, as [URL] masks them (userinfo, query values, bare query keys).
//
// Short flags other than those spelt out above (-p, -k, ...) mean too many things to be
// guessed; a secret passed that way, or as a bare positional argument, is not recognised.
// Pass secrets through the environment instead: environment values are always masked.
func Args(args []string) []string {
	out := slices.Clone(args)
	for _, m := range argSecrets(args) {
		out[m.index] = m.shown
	}
	return out
}

// ArgSecrets returns the secret parts of args that [Args] masks, for scrubbing them from
// text the program itself prints (its stderr).
func ArgSecrets(args []string) []string {
	var s []string
	for _, m := range argSecrets(args) {
		s = append(s, m.secrets...)
	}
	return s
}

// EnvSecrets returns the environment values to scrub from text the program itself prints
// (its stderr) or a server sends back: every value of a variable whose name looks like a
// credential (GITHUB_TOKEN, API_KEY, DB_PASSWORD, ...; the rule of [Args]), and every other
// value of at least [MinEnvSecretLen] bytes. Every environment value is masked where the
// configuration is shown ([Keys]); in free text, masking short settings ("1", "info",
// "3000") would make it unreadable.
func EnvSecrets(env map[string]string) []string {
	var s []string
	for name, v := range env {
		if InFreeText(name, v) {
			s = append(s, v)
		}
	}
	return s
}

// argMask is one masked argument.
type argMask struct {
	index   int
	shown   string   // the argument as shown
	secrets []string // the parts that were masked
}

func argSecrets(args []string) []argMask {
	var out []argMask
	for i := 0; i < len(args); i++ {
		a := args[i]
		if m, ok := maskArg(a); ok {
			out = append(out, argMask{index: i, shown: m.shown, secrets: m.secrets})
			continue
		}
		if i+1 >= len(args) || !isFlag(a) || strings.Contains(a, "=") {
			continue
		}
		next := args[i+1]
		switch {
		case isHeaderFlag(a):
			if shown, sec, ok := maskHeader(next, true); ok {
				out = append(out, argMask{index: i + 1, shown: shown, secrets: []string{sec}})
				i++
			}
		case credentialName(a) && !strings.HasPrefix(next, "-") && next != "":
			out = append(out, argMask{index: i + 1, shown: Mask, secrets: []string{next}})
			i++
		}
	}
	return out
}

// maskArg masks one argument on its own (no look at its neighbours).
func maskArg(a string) (argMask, bool) {
	if name, val, ok := strings.Cut(a, "="); ok && val != "" && !strings.ContainsAny(name, ":/") {
		switch {
		case credentialName(name):
			return argMask{shown: name + "=" + Mask, secrets: []string{val}}, true
		case isHeaderFlag(name):
			if shown, sec, ok := maskHeader(val, true); ok {
				return argMask{shown: name + "=" + shown, secrets: []string{sec}}, true
			}
		case strings.Contains(val, "://"):
			if m, ok := maskURL(val); ok {
				m.shown = name + "=" + m.shown
				return m, true
			}
		}
		return argMask{}, false
	}
	if strings.Contains(a, "://") {
		return maskURL(a)
	}
	if rest, ok := strings.CutPrefix(a, "Bearer "); ok && strings.TrimSpace(rest) != "" {
		return argMask{shown: "Bearer " + Mask, secrets: []string{strings.TrimSpace(rest)}}, true
	}
	if shown, sec, ok := maskHeader(a, false); ok {
		return argMask{shown: shown, secrets: []string{sec}}, true
	}
	return argMask{}, false
}

// maskURL masks a URL argument as URL does, if it has anything to mask.
func maskURL(a string) (argMask, bool) {
	u, err := url.Parse(a)
	if err != nil {
		return argMask{shown: Mask, secrets: []string{a}}, true
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		return argMask{}, false
	}
	secrets := URLSecrets(u)
	if u.Fragment != "" {
		secrets = append(secrets, u.Fragment)
	}
	return argMask{shown: URL(a), secrets: secrets}, true
}

// maskHeader masks the value of a "Name: value" argument. With anyName false, only a
// credential-like Name counts.
func maskHeader(a string, anyName bool) (shown, secret string, ok bool) {
	name, val, found := strings.Cut(a, ":")
	if !found || !IsHeaderName(name) || (!anyName && !credentialName(name)) {
		return "", "", false
	}
	val = strings.TrimSpace(val)
	if val == "" {
		return "", "", false
	}
	return name + ": " + Mask, val, true
}

// isFlag reports whether a looks like an option: -x, --xyz.
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && a != "--"
}

func isHeaderFlag(a string) bool {
	switch a {
	case "-H", "--header", "--headers", "-header":
		return true
	}
	return false
}

// credentialName reports whether an option or variable name (with or without leading
// dashes) names a credential.
func credentialName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	if n == "" || strings.HasPrefix(n, "no-") || strings.HasPrefix(n, "no_") {
		return false
	}
	for _, w := range [...]string{"token", "secret", "passw", "key", "auth", "credential", "bearer", "cookie"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, part := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if part == "pat" || part == "pass" || part == "pw" {
			return true
		}
	}
	return false
}

// IsHeaderName reports whether s is an HTTP header name (an RFC 9110 token). The config
// reader uses it too, so "what is a header" is decided in one place.
func IsHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}
