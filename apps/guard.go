package apps

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// HandlerOptions say who may use the handler. A local proxy is reachable from every web
// page the user opens: a page on another site can POST to it (cross-site request) or point a
// DNS name of its own at 127.0.0.1 (DNS rebinding). So by default only requests whose Host
// names a loopback address and whose Origin, when a browser sends one, is a loopback origin
// are served; others get 403. The handler does no authentication: a host that exposes it
// beyond loopback (or to other local users) must add its own.
type HandlerOptions struct {
	// AllowedHosts are further Host header values to accept: "name" (any port) or
	// "name:port". "*" accepts any Host (for a handler behind a reverse proxy that checks).
	AllowedHosts []string
	// AllowedOrigins are further browser origins to accept, as "scheme://host[:port]"
	// (compared case-insensitively); "*" accepts any. Requests without an Origin header
	// (not from a browser) are accepted.
	AllowedOrigins []string
}

// allowedHost reports whether a request's Host is acceptable.
func (o *HandlerOptions) allowedHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	if isLoopback(name) {
		return true
	}
	for _, a := range o.AllowedHosts {
		if a == "*" || strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// allowedOrigin reports whether a request's Origin header (empty: none) is acceptable.
func (o *HandlerOptions) allowedOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	for _, a := range o.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false // includes "null", the origin of sandboxed frames and files
	}
	return isLoopback(u.Hostname())
}

// isLoopback reports whether a host name is "localhost" or a loopback IP address.
func isLoopback(name string) bool {
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// check answers 403 and returns false for a request from a Host or Origin not allowed.
func (o *HandlerOptions) check(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case !o.allowedHost(r.Host):
		writeError(w, http.StatusForbidden, "host not allowed: the proxy answers loopback names only (see apps.HandlerOptions)")
		return false
	case !o.allowedOrigin(r.Header.Get("Origin")):
		writeError(w, http.StatusForbidden, "origin not allowed: the proxy answers pages from loopback origins only (see apps.HandlerOptions)")
		return false
	}
	return true
}
