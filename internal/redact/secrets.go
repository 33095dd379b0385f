package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// MinEnvSecretLen is the length from which an environment or header value whose name does
// not look like a credential is searched for in free text (a server's stderr, its error
// messages). Shorter values under such names ("1", "info", "true", "3000", "mcphost") are
// settings, and masking each of them wherever it appears would make the text unreadable
// while hiding nothing. Values of credential-named variables and headers (API_TOKEN,
// Authorization, X-Api-Key, Cookie, ...) are searched for from [MinSecretLen].
const MinEnvSecretLen = 8

// InFreeText reports whether the value of an environment variable or header called name is
// a secret to mask in free text: any value of a credential-like name, other values from
// [MinEnvSecretLen] bytes.
func InFreeText(name, value string) bool {
	return value != "" && (credentialName(name) || len(value) >= MinEnvSecretLen)
}

// HeaderSecrets returns the strings of a header value that must never be shown: the value
// itself and, for "<scheme> <credentials>" (Bearer, Basic, Token, ...), the credentials
// alone, since a server may quote the token without its scheme. For Basic, the decoded
// "user:password" and the password are included too.
func HeaderSecrets(value string) []string {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	s := []string{value}
	scheme, cred, ok := strings.Cut(value, " ")
	if !ok || !IsHeaderName(scheme) {
		return s
	}
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return s
	}
	s = append(s, cred)
	if strings.EqualFold(scheme, "Basic") {
		if b, err := base64.StdEncoding.DecodeString(cred); err == nil {
			s = append(s, string(b))
			if _, pw, ok := strings.Cut(string(b), ":"); ok && pw != "" {
				s = append(s, pw)
			}
		}
	}
	return s
}

// ConfigSecrets returns every secret string of one server's settings, for masking in text
// anyone produced (a server's error messages, its stderr, a tool's result the CLI prints):
// the URL's userinfo, query values and bare keys; header values with their credentials
// ([HeaderSecrets]; by the rule of [EnvSecrets]: every value of a credential-named header,
// others from [MinEnvSecretLen] bytes); the environment values ([EnvSecrets]); and the
// credential parts of the command line ([ArgSecrets]). Each is also given in its
// JSON-escaped spelling when that differs, so JSON output is masked too.
func ConfigSecrets(rawURL string, headers, env map[string]string, args []string) []string {
	var s []string
	if rawURL != "" {
		if u, err := url.Parse(rawURL); err == nil {
			s = append(s, URLSecrets(u)...)
		}
	}
	for _, v := range EnvSecrets(headers) {
		s = append(s, HeaderSecrets(v)...)
	}
	s = append(s, EnvSecrets(env)...)
	s = append(s, ArgSecrets(args)...)
	return WithJSONSpellings(s)
}

// WithJSONSpellings returns secrets plus, for each one whose JSON string encoding differs
// (quotes, backslashes, control characters, <, > and &), that encoding without its quotes.
// Duplicates and empty strings are dropped.
func WithJSONSpellings(secrets []string) []string {
	out := make([]string, 0, len(secrets))
	for _, v := range secrets {
		if v == "" {
			continue
		}
		out = append(out, v)
		if b, err := json.Marshal(v); err == nil {
			if q := string(b[1 : len(b)-1]); q != v {
				out = append(out, q)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
