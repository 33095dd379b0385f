package serve

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

//go:embed web
var webFS embed.FS

// Options configures a Host. Set is required; zero values of the rest mean the defaults.
type Options struct {
	// Set is what the page shows and calls; the Host does not close it.
	Set *bridge.Set
	// Order lists server IDs in config order, so failed servers appear where they were
	// configured; servers not in it follow in the Set's order.
	Order []string
	// Addr is the page's listen address. Default "127.0.0.1:0" (a free port). Only loopback
	// addresses are accepted.
	Addr string
	// SandboxAddr is the listen address of the MCP Apps sandbox, the second origin Views run
	// in. Default "127.0.0.1:0". Only loopback addresses are accepted.
	SandboxAddr string
	// Token is the secret every request must carry; default: 32 random bytes, hex.
	Token string
	// Logger receives one line per refused request and per App request. Default: discard.
	Logger *slog.Logger
	// Version is shown on the page and sent to Views as hostInfo.version.
	Version string
	// Calls, when set, follows the page's calls while they run (progress, MCP task status,
	// requests for input the page answers); its Elicit must be the Set's
	// Options.OnElicitation for those requests to reach the page.
	Calls *Calls
	// MaxResultBytes is the cap applied to what the model reads of an app-only tool's result
	// (other tools use the Set's own). 0: results.DefaultMaxBytes.
	MaxResultBytes int
	// Tokens, when set, counts what each tool definition and each server's instructions
	// cost (a *tokens.Counter); the page shows it. Nil: no counts.
	Tokens TokenCounter
}

// TokenCounter counts model tokens (bridge/tokens.Counter is one).
type TokenCounter interface {
	Count(s string) int
	Tool(t bridge.Tool) int
}

// Host serves the page and the sandbox on two loopback listeners.
type Host struct {
	opts    Options
	log     *slog.Logger
	token   string
	guard   *guard
	origin  string // the page's origin, http://127.0.0.1:PORT
	sandbox string // the sandbox's origin, http://127.0.0.1:PORT2

	static   fs.FS // the embedded web directory
	ln, sbln net.Listener
	srv, sb  *http.Server

	closeOnce sync.Once
	closeErr  error
}

// Listen binds both listeners and returns a Host ready to Serve.
func Listen(opts Options) (*Host, error) {
	if opts.Set == nil {
		return nil, errors.New("serve: Options.Set is nil")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token := opts.Token
	if token == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("serve: token: %w", err)
		}
		token = hex.EncodeToString(b)
	}
	static, err := fs.Sub(webFS, "web")
	if err != nil {
		return nil, fmt.Errorf("serve: embedded files: %w", err)
	}
	ln, err := listenLoopback(opts.Addr)
	if err != nil {
		return nil, err
	}
	sbln, err := listenLoopback(opts.SandboxAddr)
	if err != nil {
		ln.Close()
		return nil, err
	}
	addr := ln.Addr().(*net.TCPAddr)
	sbAddr := sbln.Addr().(*net.TCPAddr)
	h := &Host{
		opts:    opts,
		log:     log,
		token:   token,
		guard:   newGuard(addr, token),
		origin:  "http://" + addr.String(),
		sandbox: "http://" + sbAddr.String(),
		ln:      ln,
		sbln:    sbln,
		static:  static,
	}
	h.srv = &http.Server{Handler: h.guard.wrap(h.routes()), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	h.sb = &http.Server{Handler: h.sandboxRoutes(sbAddr), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	return h, nil
}

// CheckAddr reports whether addr is one Listen accepts: host:port with a loopback IP
// address ("" means 127.0.0.1 and a free port).
func CheckAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("serve: address %q is not a loopback IP address; the page is only served on this machine", addr)
	}
	return nil
}

func listenLoopback(addr string) (net.Listener, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return ln, nil
}

// URL is the page's address with the token, for the user to open.
func (h *Host) URL() string { return h.origin + "/?token=" + h.token }

// Origin is the page's origin (scheme, loopback IP and port), without the token.
func (h *Host) Origin() string { return h.origin }

// SandboxOrigin is the origin Views are rendered in.
func (h *Host) SandboxOrigin() string { return h.sandbox }

// Serve serves both listeners until ctx ends or Close is called, then shuts them down
// (requests in flight get a few seconds) and returns nil; otherwise the first listener error.
func (h *Host) Serve(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() { errc <- h.srv.Serve(h.ln) }()
	go func() { errc <- h.sb.Serve(h.sbln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close stops both listeners, giving requests in flight up to 5 seconds.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.closeErr = errors.Join(shutdown(ctx, h.srv, h.ln), shutdown(ctx, h.sb, h.sbln))
	})
	return h.closeErr
}

func shutdown(ctx context.Context, srv *http.Server, ln net.Listener) error {
	err := srv.Shutdown(ctx)
	if err != nil {
		err = srv.Close()
	}
	ln.Close() // Serve may never have run; the listener is ours either way
	return err
}

// routes is the page's mux; every route is behind the guard.
func (h *Host) routes() http.Handler {
	static := h.static
	files := http.FileServerFS(static)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h.pageHeaders(w)
		http.ServeFileFS(w, r, static, "index.html")
	})
	for _, f := range []string{"host.js", "style.css"} {
		mux.HandleFunc("GET /"+f, func(w http.ResponseWriter, r *http.Request) {
			h.pageHeaders(w)
			files.ServeHTTP(w, r)
		})
	}
	mux.HandleFunc("GET /api/servers", h.handleServers)
	mux.HandleFunc("POST /api/call", h.handleCall)
	mux.HandleFunc("GET /api/search", h.handleSearch)
	mux.HandleFunc("GET /api/calls/{id}", h.handleCallStatus)
	mux.HandleFunc("POST /api/calls/{id}/input", h.handleCallInput)
	mux.Handle("POST /api/proxy", h.proxyHandler())
	return mux
}

// pageHeaders are the page's own security headers: only its own scripts and styles, frames
// only from the sandbox origin, no embedding elsewhere, and Trusted Types required so no
// string can ever become HTML or script on the page.
func (h *Host) pageHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "+
		"frame-src "+h.sandbox+"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
}
