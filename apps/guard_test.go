package apps

import "testing"

func TestHandlerOptionsHostAndOrigin(t *testing.T) {
	def := &HandlerOptions{}
	custom := &HandlerOptions{AllowedHosts: []string{"mcp.internal", "proxy.example:8443"}, AllowedOrigins: []string{"https://app.example/"}}
	hosts := []struct {
		opts *HandlerOptions
		host string
		ok   bool
	}{
		{def, "127.0.0.1:8080", true},
		{def, "127.9.9.9", true},
		{def, "[::1]:3000", true},
		{def, "LOCALHOST:1", true},
		{def, "localhost.", true},
		{def, "evil.example", false},
		{def, "127.0.0.1.evil.example", false},
		{def, "0.0.0.0:80", false},
		{def, "", false},
		{custom, "mcp.internal:9999", true},
		{custom, "proxy.example:8443", true},
		{custom, "proxy.example:80", false},
		{&HandlerOptions{AllowedHosts: []string{"*"}}, "anything", true},
	}
	for _, tt := range hosts {
		if got := tt.opts.allowedHost(tt.host); got != tt.ok {
			t.Errorf("allowedHost(%q) with %v = %v, want %v", tt.host, tt.opts.AllowedHosts, got, tt.ok)
		}
	}
	origins := []struct {
		opts   *HandlerOptions
		origin string
		ok     bool
	}{
		{def, "", true},
		{def, "http://127.0.0.1:5173", true},
		{def, "http://localhost", true},
		{def, "https://[::1]:8443", true},
		{def, "null", false},
		{def, "http://evil.example", false},
		{def, "file://", false},
		{def, "http://localhost.evil.example", false},
		{custom, "https://APP.example", true},
		{custom, "http://app.example", false},
		{&HandlerOptions{AllowedOrigins: []string{"*"}}, "null", true},
	}
	for _, tt := range origins {
		if got := tt.opts.allowedOrigin(tt.origin); got != tt.ok {
			t.Errorf("allowedOrigin(%q) with %v = %v, want %v", tt.origin, tt.opts.AllowedOrigins, got, tt.ok)
		}
	}
}
