package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// Proxier forwards a validated frontend request to the MCP server it names and returns the
// server's raw JSON result. It is implemented by *bridge.Set. Errors wrap the sentinels of
// this package ([ErrUnknownServer], [ErrAmbiguousServer], [ErrMethodNotAllowed],
// [ErrToolNotAllowed], [ErrBadRequest]); any other error means the server could not be
// reached or answered with an error. Implementations must be safe for concurrent use.
type Proxier interface {
	Proxy(ctx context.Context, req ProxyRequest) (json.RawMessage, error)
}

// MaxRequestBytes is the largest request body [NewHandler] accepts.
const MaxRequestBytes = 4 << 20

// NewHandler returns an http.Handler serving the proxy contract: a POST whose body is a
// JSON [ProxyRequest] is checked with [ValidateRequest] and passed to p.Proxy with the
// request's context. opts says which Host and Origin values are accepted besides loopback
// ones; nil accepts loopback only (see [HandlerOptions]). Status codes:
//
//   - 200: the raw MCP result bytes, unchanged, as application/json ({} when the result is
//     empty, as for a notification).
//   - 400: body not a JSON ProxyRequest, missing method or server reference, bad params, or
//     an error wrapping [ErrBadRequest].
//   - 403: a Host that is not a loopback name, or a browser Origin that is not a loopback
//     origin (DNS rebinding, cross-site requests; see [HandlerOptions] to allow more), or
//     [ErrMethodNotAllowed] or [ErrToolNotAllowed].
//   - 404: [ErrUnknownServer].
//   - 405 with "Allow: POST": any method other than POST.
//   - 409: [ErrAmbiguousServer].
//   - 413: body larger than [MaxRequestBytes].
//   - 415: a Content-Type other than application/json, or none. Browsers cannot send
//     application/json cross-site without a CORS preflight, so forms and simple requests
//     from other sites cannot reach the proxy. Authentication remains the mounting
//     application's job: the handler serves anyone who can reach it with an allowed Host.
//   - 504: the error wraps context.DeadlineExceeded.
//   - 502: any other error from p.
//
// Error responses are application/json {"error":"…"} holding only the error's own text.
// The handler keeps no state and may be mounted at any path of an existing mux. p must not
// be nil; a nil p answers every valid request with 502.
func NewHandler(p Proxier, opts *HandlerOptions) http.Handler {
	h := handler{p: p}
	if opts != nil {
		h.opts.AllowedHosts = append([]string(nil), opts.AllowedHosts...)
		h.opts.AllowedOrigins = append([]string(nil), opts.AllowedOrigins...)
	}
	return h
}

type handler struct {
	p    Proxier
	opts HandlerOptions
}

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.opts.check(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method "+quote(r.Method)+" not allowed, use POST")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "content type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", MaxRequestBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "reading request body: "+err.Error())
		return
	}
	var req ProxyRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "request body is not a JSON proxy request: "+jsonProblem(err))
		return
	}
	if err := ValidateRequest(req); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if h.p == nil {
		writeError(w, http.StatusBadGateway, "no proxy configured")
		return
	}
	res, err := h.p.Proxy(r.Context(), req)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if len(res) == 0 {
		res = json.RawMessage("{}")
	}
	setJSONHeaders(w)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(res) // the client has gone if this fails; nothing left to tell it
}

// statusOf maps a proxy error to its HTTP status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrMethodNotAllowed), errors.Is(err, ErrToolNotAllowed):
		return http.StatusForbidden
	case errors.Is(err, ErrUnknownServer):
		return http.StatusNotFound
	case errors.Is(err, ErrAmbiguousServer):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// jsonProblem describes a decoding error without echoing the request body.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("invalid JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %s must be a %s, not %s", quote(typ.Field), typ.Type, typ.Value)
		}
		return fmt.Sprintf("want a JSON object, not %s", typ.Value)
	}
	return "invalid JSON"
}

func setJSONHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, err := json.Marshal(map[string]string{"error": msg})
	if err != nil { // cannot happen for a map of strings
		body = []byte(`{"error":"internal error"}`)
	}
	setJSONHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // the client has gone if this fails
}
