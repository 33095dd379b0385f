package redact

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// MaxCreds is how many OAuth credentials a Book remembers (the newest).
const MaxCreds = 4

// Book holds the secret strings of one server: those of its configuration, the OAuth
// credentials its transport sent, and (through perCall) those of the request at hand.
type Book struct {
	static  []string                           // from the configuration; never changes
	perCall func(ctx context.Context) []string // the per-call secrets of ctx, or nil

	mu    sync.Mutex // a leaf lock: nothing is called while it is held
	creds [][]string // the secrets of the OAuth credentials the transport sent, newest last
}

// NewBook returns the book of a server whose configuration holds static (already with
// their JSON spellings, see [WithJSONSpellings]); perCall, when not nil, gives the secrets
// of the request a context belongs to (its per-call headers).
func NewBook(static []string, perCall func(ctx context.Context) []string) *Book {
	return &Book{static: static, perCall: perCall}
}

// HeldLocks names the Book's locks that some goroutine holds now, for the host's tests of
// the lock order (a leaf: nothing holds it while logging or calling out).
func (b *Book) HeldLocks() []string {
	if b.mu.TryLock() {
		b.mu.Unlock()
		return nil
	}
	return []string{"secretBook.mu"}
}

// AddCredential remembers an Authorization value the transport sent (transport.Spec's
// OnCredential).
func (b *Book) AddCredential(v string) {
	s := WithJSONSpellings(HeaderSecrets(v))
	b.mu.Lock()
	b.creds = append(b.creds, s)
	if n := len(b.creds) - MaxCreds; n > 0 {
		b.creds = b.creds[n:]
	}
	b.mu.Unlock()
}

// List returns every secret to mask in text about a request made under ctx.
func (b *Book) List(ctx context.Context) []string {
	b.mu.Lock()
	creds := b.creds
	b.mu.Unlock()
	var perCall []string
	if b.perCall != nil {
		perCall = b.perCall(ctx)
	}
	if len(creds) == 0 && len(perCall) == 0 {
		return b.static
	}
	s := append([]string(nil), b.static...)
	for _, c := range creds {
		s = append(s, c...)
	}
	return append(s, WithJSONSpellings(perCall)...)
}

// NewHandler returns the slog.Handler of a server's logger: every message and attribute
// (strings, errors, anything printed) written through inner has the secrets of book masked,
// and those of the per-call headers when the record is logged with the call's context.
func NewHandler(inner slog.Handler, book *Book) slog.Handler {
	return &maskingHandler{inner: inner, book: book}
}

// maskingHandler is NewHandler's slog.Handler.
type maskingHandler struct {
	inner slog.Handler
	book  *Book
}

func (h *maskingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *maskingHandler) Handle(ctx context.Context, r slog.Record) error {
	secrets := h.book.List(ctx)
	nr := slog.NewRecord(r.Time, r.Level, String(r.Message, secrets), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(maskAttr(a, secrets))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

func (h *maskingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	secrets := h.book.List(context.Background())
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = maskAttr(a, secrets)
	}
	return &maskingHandler{inner: h.inner.WithAttrs(masked), book: h.book}
}

func (h *maskingHandler) WithGroup(name string) slog.Handler {
	return &maskingHandler{inner: h.inner.WithGroup(name), book: h.book}
}

// maskAttr masks secrets in a's value: a string, or the text of an error or any other
// value, which then becomes a string. Values without a secret are kept as they are.
func maskAttr(a slog.Attr, secrets []string) slog.Attr {
	v := a.Value.Resolve()
	var text string
	switch v.Kind() {
	case slog.KindString:
		text = v.String()
	case slog.KindGroup:
		g := v.Group()
		masked := make([]any, len(g))
		for i, ga := range g {
			masked[i] = maskAttr(ga, secrets)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			text = fmt.Sprint(x)
		}
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
	if m := String(text, secrets); m != text {
		return slog.String(a.Key, m)
	}
	return slog.Attr{Key: a.Key, Value: v}
}
