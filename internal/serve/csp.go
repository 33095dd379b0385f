package serve

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ttalk/mcpbridge/internal/redact"
)

// CSP is the _meta.ui.csp of an MCP Apps UI resource: the origins a View may reach. Empty
// lists mean none (the restrictive default).
type CSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// Bounds on what a server may declare.
const (
	maxCSPSources   = 32  // per list
	maxCSPSourceLen = 256 // bytes per entry
	maxCSPJSON      = 16 << 10
)

// cspSource is the one shape of declared origin accepted: a scheme, a host (optionally with
// a leading "*." wildcard label), an optional port (digits or *) and an optional path of
// plain characters. Quotes, keywords, whitespace, semicolons and commas never match, so a
// declaration can add an origin but never a directive or a keyword such as 'unsafe-eval';
// a bare "*" or a scheme alone ("https:") never match either, as they would allow every
// origin the server did not name.
var cspSource = regexp.MustCompile(`^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:([0-9]{1,5}|\*))?(/[A-Za-z0-9._~%/-]*)?$`)

// ParseCSP reads a resource's _meta.ui.csp as JSON. Entries that are not acceptable origins
// (see cspSource) are dropped and reported; so are entries past the bounds. Malformed JSON
// gives the empty (most restrictive) CSP and a problem. It never fails.
func ParseCSP(raw []byte) (CSP, []string) {
	var c CSP
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if len(raw) > maxCSPJSON {
		return c, []string{fmt.Sprintf("csp is %d bytes, more than %d; using the restrictive default", len(raw), maxCSPJSON)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return c, []string{"csp is not a JSON object; using the restrictive default"}
	}
	var problems []string
	list := func(key string) []string {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return nil
		}
		var items []any
		if err := json.Unmarshal(v, &items); err != nil {
			problems = append(problems, fmt.Sprintf("csp.%s is not an array; ignored", key))
			return nil
		}
		var out []string
		for i, it := range items {
			s, ok := it.(string)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("csp.%s[%d] is not a string; ignored", key, i))
			case len(out) >= maxCSPSources:
				problems = append(problems, fmt.Sprintf("csp.%s has more than %d entries; the rest are ignored", key, maxCSPSources))
				return out
			case len(s) > maxCSPSourceLen || !cspSource.MatchString(s):
				problems = append(problems, fmt.Sprintf("csp.%s[%d] %s is not an origin this host allows; ignored", key, i, redact.Quote(s, 80)))
			default:
				out = append(out, s)
			}
		}
		return out
	}
	c.ConnectDomains = list("connectDomains")
	c.ResourceDomains = list("resourceDomains")
	c.FrameDomains = list("frameDomains")
	c.BaseURIDomains = list("baseUriDomains")
	return c, problems
}

// Policy returns the Content-Security-Policy for a View with these declarations, following
// the MCP Apps specification (2026-01-26): the restrictive default, widened only by the
// declared origins, never by anything else. frameAncestors, when given, become the
// frame-ancestors directive (who may embed the sandbox).
func (c CSP) Policy(frameAncestors ...string) string {
	join := func(base string, extra []string) string {
		if len(extra) == 0 {
			return base
		}
		return base + " " + strings.Join(extra, " ")
	}
	orNone := func(extra []string, none string) string {
		if len(extra) == 0 {
			return none
		}
		return strings.Join(extra, " ")
	}
	d := []string{
		"default-src 'none'",
		join("script-src 'self' 'unsafe-inline'", c.ResourceDomains),
		join("style-src 'self' 'unsafe-inline'", c.ResourceDomains),
		join("img-src 'self' data:", c.ResourceDomains),
		join("font-src 'self'", c.ResourceDomains),
		join("media-src 'self' data:", c.ResourceDomains),
		"connect-src " + orNone(c.ConnectDomains, "'none'"),
		"frame-src " + orNone(c.FrameDomains, "'none'"),
		"object-src 'none'",
		"base-uri " + orNone(c.BaseURIDomains, "'self'"),
	}
	if len(frameAncestors) > 0 {
		d = append(d, "frame-ancestors "+strings.Join(frameAncestors, " "))
	}
	return strings.Join(d, "; ")
}
