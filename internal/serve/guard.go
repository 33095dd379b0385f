package serve

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
)

// guard admits a request to the host listener only when it is addressed to this listener by
// a loopback name (DNS rebinding: an attacker's domain that resolves to 127.0.0.1 carries
// its own Host), does not come from another origin (a browser's Origin or Sec-Fetch-Site
// says so; the sandbox's port is another origin), and carries the run's token as a cookie or
// a "token" query parameter.
type guard struct {
	hosts   map[string]bool // acceptable Host headers: loopback names with our port
	origins map[string]bool // acceptable Origin headers: "http://" + hosts
	token   string
	cookie  string // cookie name; includes the port, as cookies are not port-scoped
}

func newGuard(addr *net.TCPAddr, token string) *guard {
	port := strconv.Itoa(addr.Port)
	names := []string{addr.IP.String()}
	if addr.IP.IsLoopback() {
		names = append(names, "localhost")
	}
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}, token: token, cookie: "mcpbridge_token_" + port}
	for _, n := range names {
		h := net.JoinHostPort(n, port)
		g.hosts[h] = true
		g.origins["http://"+h] = true
	}
	return g
}

// hostOK reports whether r is addressed to us by a name we answer to.
func (g *guard) hostOK(r *http.Request) bool { return g.hosts[r.Host] }

// sameOrigin reports whether a browser says the request comes from our own page (or from
// the user typing the URL). Non-browser clients send neither header and pass; they still
// need the token.
func (g *guard) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && !g.origins[o] {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

// tokenOK reports whether r carries the token as a cookie or as ?token=.
func (g *guard) tokenOK(r *http.Request) bool {
	if c, err := r.Cookie(g.cookie); err == nil && g.equal(c.Value) {
		return true
	}
	return g.equal(r.URL.Query().Get("token"))
}

func (g *guard) equal(s string) bool {
	return s != "" && subtle.ConstantTimeCompare([]byte(s), []byte(g.token)) == 1
}

// wrap applies the checks before next. A GET of "/" with a valid ?token= sets the cookie
// and redirects to "/", so the token leaves the address bar and history.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !g.hostOK(r):
			refuse(w, http.StatusMisdirectedRequest, "unknown host")
			return
		case !g.sameOrigin(r):
			refuse(w, http.StatusForbidden, "cross-origin request refused")
			return
		case !g.tokenOK(r):
			refuse(w, http.StatusUnauthorized, "missing or wrong token: open the URL mcpbridge serve printed")
			return
		}
		if r.URL.Query().Has("token") && r.Method == http.MethodGet && r.URL.Path == "/" {
			http.SetCookie(w, &http.Cookie{
				Name:     g.cookie,
				Value:    g.token,
				Path:     "/",
				HttpOnly: true,
				SameSite: http.SameSiteStrictMode,
			})
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Referrer-Policy", "no-referrer")
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers with a short plain-text status; nothing from the request is echoed.
func refuse(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n")) // the client has gone if this fails
}
