package serve

import (
	"html"
	"net"
	"net/http"
	"strconv"
)

// sandboxPage is the sandbox proxy document. Its only inserted value is the page's origin
// (ours, not a server's), HTML-escaped all the same.
func sandboxPage(hostOrigin string) []byte {
	return []byte(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="mcpbridge-host-origin" content="` + html.EscapeString(hostOrigin) + `">
<title>mcpbridge MCP App sandbox</title>
<script src="/sandbox.js"></script>
</head>
<body></body>
</html>
`)
}

// sandboxRoutes serves the second origin: the sandbox proxy page that MCP Apps Views are
// loaded into. The page's Content-Security-Policy header is built from the View's declared
// _meta.ui.csp (query parameter "csp", as JSON) and is inherited by the View's srcdoc frame,
// so no declaration inside the View's HTML can widen it. frame-ancestors lets only the
// page embed the sandbox.
func (h *Host) sandboxRoutes(addr *net.TCPAddr) http.Handler {
	port := strconv.Itoa(addr.Port)
	hosts := map[string]bool{net.JoinHostPort(addr.IP.String(), port): true}
	if addr.IP.IsLoopback() {
		hosts[net.JoinHostPort("localhost", port)] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sandbox", func(w http.ResponseWriter, r *http.Request) {
		csp, problems := ParseCSP([]byte(r.URL.Query().Get("csp")))
		policy := csp.Policy(h.origin, h.sandbox)
		for _, p := range problems {
			h.log.Warn("MCP App CSP declaration refused", "problem", p)
		}
		h.log.Info("MCP App sandbox", "csp", policy)
		hd := w.Header()
		hd.Set("Content-Security-Policy", policy)
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		_, _ = w.Write(sandboxPage(h.origin)) // the client has gone if this fails
	})
	mux.HandleFunc("GET /sandbox.js", func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, h.static, "sandbox.js")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts[r.Host] {
			refuse(w, http.StatusMisdirectedRequest, "unknown host")
			return
		}
		mux.ServeHTTP(w, r)
	})
}
