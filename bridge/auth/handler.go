package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Key is the store key of a server's grant: a hash, so the store never holds the URL's own
// query values.
func Key(serverURL, clientID, typ string) string {
	sum := sha256.Sum256([]byte(serverURL + "\x00" + clientID + "\x00" + typ))
	return hex.EncodeToString(sum[:16])
}

// Settings are what a Handler needs about its server and host.
type Settings struct {
	ID    string     // the server's ID, for the grant's Server
	URL   string     // the server's URL, for the store key
	Auth  AuthConfig // checked by Prepare
	Store TokenStore
	// HTTPClient talks to authorization servers; nil: a client with a 30 s timeout.
	HTTPClient *http.Client
	Log        *slog.Logger
	// RedirectURL and Fetch are the interactive step of the authorization code flow
	// (bridge.Authorizer); Fetch nil: never wait for a person.
	RedirectURL string
	Fetch       sdkauth.AuthorizationCodeFetcher
	// LoginFetch is the person's part of a flow Login starts (a web host's login), used
	// when Fetch is nil; a 401 during a request still fails with ErrNeedsLogin then.
	LoginFetch sdkauth.AuthorizationCodeFetcher
	// User is the user whose grant the handler holds ("" for the host's own grant); it
	// is part of the store key (UserKey).
	User string
	// RefreshJitter spreads proactive refreshes of grants in a TokenLocker store: each grant is
	// refreshed a random part of it earlier than its expiry requires, at most half the
	// token's lifetime (shared.go).
	RefreshJitter time.Duration
}

// Open is the handler of st's server with its auth block a, checked and completed by
// Prepare; a nil st.Store means DefaultTokenStore().
func Open(a AuthConfig, st Settings) (*Handler, error) {
	a, err := Prepare(a)
	if err != nil {
		return nil, err
	}
	if st.Store == nil {
		fs, err := DefaultTokenStore()
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		st.Store = fs
	}
	st.Auth = a
	return NewHandler(st), nil
}

// Prepare checks a server's AuthConfig and completes it: PrivateKeyFile is read into PrivateKey.
// Errors name the setting, never a secret.
func Prepare(a AuthConfig) (AuthConfig, error) {
	if a.PrivateKey == "" && a.PrivateKeyFile != "" {
		b, err := os.ReadFile(a.PrivateKeyFile)
		if err != nil {
			return a, fmt.Errorf("auth: private key file: %w", err)
		}
		a.PrivateKey = string(b)
	}
	if _, err := dpopMode(&a); err != nil {
		return a, err
	}
	switch a.Type {
	case AuthOAuth:
	case AuthWorkloadIdentity, AuthEnterprise:
		if err := checkAssertionConfig(&a); err != nil {
			return a, err
		}
	case AuthClientCredentials:
		if a.ClientID == "" {
			return a, errors.New("auth: client_credentials needs client_id")
		}
		if _, err := clientAuthMethod(&a); err != nil {
			return a, err
		}
	default:
		return a, fmt.Errorf("auth: unknown type %q (want %s, %s, %s or %s)", a.Type, AuthOAuth, AuthClientCredentials, AuthWorkloadIdentity, AuthEnterprise)
	}
	return a, nil
}

// Handler implements go-sdk's sdkauth.OAuthHandler for one server: tokens from the store
// (refreshed and saved as they change), the interactive flow only with an authorizer, the
// client credentials grant on its own.
//
// Locks: Handler.mu may be held while taking a savingSource.mu (never the other way round);
// savingSource.mu, sharedSource.mu, Attempt.mu, dpopGrant.mu and refusals.mu are leaves.
// Nothing is called while any of them is held (no TokenStore method, no authorizer, no logger,
// no network). The store is read once, that read shared by concurrent first uses;
// concurrent 401s share one authorization; refreshed tokens are saved by one writer
// goroutine per token source, newest last, so a slow or hanging store delays only the
// save, never a token fetch (with a TokenLocker store, a refresh is shared by this process's
// callers and the store is called without the source's lock).
type Handler struct {
	set   Settings
	auth  *AuthConfig // &set.Auth
	store TokenStore
	key   string
	hc    *http.Client
	log   *slog.Logger

	mu      sync.Mutex         // guards the fields below
	load    *flight            // reading the stored grant: started by the first TokenSource, shared
	loadErr error              // why the stored grant could not be read
	ts      oauth2.TokenSource // nil until a token is known
	inner   *sdkauth.AuthorizationCodeHandler
	authz   *flight // the authorization in progress, shared by concurrent 401s
	savers  []*savingSource

	dpop     dpopGrant // the grant's DPoP key, when its tokens are bound
	refusals refusals  // the last workload or ID token a server refused
}

// flight is one piece of work others wait for: done is closed when it ended, err is its
// outcome.
type flight struct {
	done chan struct{}
	err  error
}

// NewHandler returns the handler of one server; st.Auth must have passed Prepare.
func NewHandler(st Settings) *Handler {
	hc := st.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	h := &Handler{set: st, store: st.Store, key: UserKey(st.URL, st.Auth.ClientID, st.Auth.Type, st.User), log: st.Log}
	h.hc = h.dpop.client(hc)
	h.auth = &h.set.Auth
	return h
}

// WrapTransport is what the MCP connection's requests go through (transport.Spec's
// WrapBase): a request whose token is due for a refresh (a TokenLocker store) waits for it
// until the request's own context ends (a *RefreshWaitError) and goes out with the new token;
// then DPoP: once the grant's tokens are bound, each request with one carries a fresh proof
// of the grant's key.
func (h *Handler) WrapTransport(base http.RoundTripper) http.RoundTripper {
	return &refreshWait{h: h, next: h.dpop.wrapResource(base)}
}

// TokenSource implements sdkauth.OAuthHandler: the stored grant, read once (concurrent first
// uses wait for that one read, as long as their ctx allows).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if h.auth.Type == AuthOAuth {
		if err := h.loadStored(ctx); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// markLoaded records that the stored grant need not be read (a login or Ensure set the
// token). The caller holds h.mu.
func (h *Handler) markLoaded() {
	if h.load == nil {
		l := &flight{done: make(chan struct{})}
		close(l.done)
		h.load = l
	}
}

// loadStored reads the stored grant once; it returns ctx's error when ctx ends while another
// caller reads it. A read that fails is remembered (Authorize says why), not an error here:
// the request goes out without a token and its 401 leads to Authorize.
func (h *Handler) loadStored(ctx context.Context) error {
	h.mu.Lock()
	l := h.load
	first := l == nil
	if first {
		l = &flight{done: make(chan struct{})}
		h.load = l
	}
	h.mu.Unlock()
	if !first {
		select {
		case <-l.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	st, err := h.store.LoadToken(ctx, h.key)
	var ts oauth2.TokenSource
	keyLost := false
	if err == nil && st != nil && st.Token != nil {
		if h.dpop.useStored(st) {
			ts = h.persisting(st, st.config().TokenSource(h.tokenCtx(), st.Token))
		} else {
			keyLost = true
		}
	}
	h.mu.Lock()
	if ts != nil && h.ts == nil {
		h.ts = ts
	}
	h.loadErr = err
	h.mu.Unlock()
	close(l.done)
	switch {
	case err != nil:
		h.log.Warn("reading the stored OAuth token failed", "err", err)
	case keyLost:
		h.log.Warn("the stored OAuth token's DPoP key cannot be read; a login is needed")
	}
	return nil
}

// tokenCtx is the context refreshes run on: not a request's, since a token source outlives it.
func (h *Handler) tokenCtx() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
}

func (st *StoredToken) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: oauth2.AuthStyle(st.AuthStyle)},
		Scopes:       st.Scopes,
	}
}

// Authorize implements sdkauth.OAuthHandler; go-sdk calls it after a 401 or 403. Concurrent
// calls share one authorization: the first does it, the others wait for its outcome (as
// long as their ctx allows) and retry with its token. Within one connection attempt (see
// WithAttempt) an interactive authorization that failed is not started again: the attempt
// ends with that failure's own error (go-sdk asks once for server/discover and again for
// initialize).
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	att := attemptFrom(ctx)
	if err := att.failure(); err != nil {
		resp.Body.Close()
		return err
	}
	h.mu.Lock()
	f := h.authz
	lead := f == nil
	if lead {
		f = &flight{done: make(chan struct{})}
		h.authz = f
	}
	h.mu.Unlock()
	if !lead {
		resp.Body.Close()
		select {
		case <-f.done:
			return f.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var interactive bool
	var err error
	if h.tokenChangedSince(req) {
		// Another caller's authorization ended after this request was sent: retry with
		// its token rather than authorize again.
		resp.Body.Close()
	} else {
		interactive, err = h.authorize(ctx, req, resp)
	}
	if err != nil && interactive {
		att.fail(err)
	}
	h.mu.Lock()
	h.authz = nil
	h.mu.Unlock()
	f.err = err
	close(f.done)
	return err
}

// tokenChangedSince reports whether the token now differs from the one req was sent with
// (whatever its scheme: Bearer, DPoP).
func (h *Handler) tokenChangedSince(req *http.Request) bool {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	if ts == nil {
		return false
	}
	tok, err := ts.Token()
	if err != nil || tok.AccessToken == "" {
		return false
	}
	_, sent, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	return sent != tok.AccessToken
}

// authorize is one authorization; interactive says a person was (or was to be) asked.
func (h *Handler) authorize(ctx context.Context, req *http.Request, resp *http.Response) (interactive bool, err error) {
	if h.auth.Type != AuthOAuth {
		defer resp.Body.Close()
		defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		ts, err := h.machineGrant(ctx, req, resp)
		if err != nil {
			return false, err
		}
		h.mu.Lock()
		h.ts = ts
		h.mu.Unlock()
		return false, nil
	}
	if resp.StatusCode == http.StatusUnauthorized {
		switch ok, err := h.refreshNow(ctx, req); {
		case ok:
			resp.Body.Close()
			return false, nil // the server refused a token that looked valid: retry with a fresh one
		case err != nil:
			// The store failed, not the grant: no login would help.
			resp.Body.Close()
			return false, err
		}
	}
	if h.set.Fetch == nil {
		resp.Body.Close()
		h.mu.Lock()
		noToken, loadErr := h.ts == nil, h.loadErr
		h.mu.Unlock()
		if loadErr != nil {
			// The token store is the problem, not a missing login: say what to fix.
			return false, fmt.Errorf("auth: the stored OAuth token cannot be read: %w", loadErr)
		}
		why := "the server refused the stored token"
		if noToken {
			why = "no OAuth token is stored for it"
		}
		if resp.StatusCode == http.StatusForbidden {
			why = "the server wants more scopes than the stored token has"
		}
		return false, fmt.Errorf("%w: %s", ErrNeedsLogin, why)
	}
	inner, err := h.interactive(ctx)
	if err != nil {
		resp.Body.Close()
		return true, err
	}
	if err := h.bindCodeGrant(ctx, req, resp); err != nil {
		resp.Body.Close()
		return true, err
	}
	defer h.dpop.abandon() // a no-op once the new grant's token arrived
	if err := inner.Authorize(ctx, req, resp); err != nil {
		return true, err
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil {
		return true, err
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true, nil
}

// refreshNow refreshes the stored grant at once, whatever its access token's expiry says;
// it reports whether a new token was obtained, and an error wrapping ErrTokenStore when the
// store failed.
func (h *Handler) refreshNow(ctx context.Context, req *http.Request) (bool, error) {
	if _, ok := h.store.(TokenLocker); ok {
		_, refused, _ := strings.Cut(req.Header.Get("Authorization"), " ") // Bearer or DPoP
		return h.refreshShared(ctx, refused)
	}
	st, err := h.newestGrant(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: reading the grant: %w", ErrTokenStore, err)
	}
	if st == nil || st.Token == nil || st.Token.RefreshToken == "" || !h.dpop.useStored(st) {
		return false, nil
	}
	stale := *st.Token
	stale.AccessToken = "" // invalid, so the token source refreshes
	ts := h.persisting(st, st.config().TokenSource(h.tokenCtx(), &stale))
	if _, err := ts.Token(); err != nil {
		h.log.Debug("refreshing the OAuth token failed", "err", err)
		return false, nil
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true, nil
}

// newestGrant is the grant to refresh from: the store's (another process may have refreshed
// it meanwhile), unless this handler holds a newer one the store does not have yet (its save
// is still under way).
func (h *Handler) newestGrant(ctx context.Context) (*StoredToken, error) {
	h.mu.Lock()
	cur, _ := h.ts.(*savingSource)
	h.mu.Unlock()
	if cur != nil {
		cur.mu.Lock()
		pending, g := cur.saved != cur.gen, cur.st
		cur.mu.Unlock()
		if pending {
			return &g, nil
		}
	}
	return h.store.LoadToken(ctx, h.key)
}

// interactive returns go-sdk's authorization code handler, created on first use (by the one
// authorization running: see Authorize).
func (h *Handler) interactive(ctx context.Context) (*sdkauth.AuthorizationCodeHandler, error) {
	h.mu.Lock()
	inner := h.inner
	h.mu.Unlock()
	if inner != nil {
		return inner, nil
	}
	initial, err := h.TokenSource(ctx)
	if err != nil {
		return nil, err
	}
	a := h.auth
	c := &sdkauth.AuthorizationCodeHandlerConfig{
		RedirectURL:              h.set.RedirectURL,
		AuthorizationCodeFetcher: h.fetcher(),
		RequestRefreshToken:      true,
		Client:                   h.hc,
		InitialTokenSource:       initial,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := h.checkBinding(tok); err != nil {
				return nil, err
			}
			key, err := h.dpop.storedKey()
			if err != nil {
				return nil, err
			}
			st := &StoredToken{
				Server: h.set.ID, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
				AuthURL: oc.Endpoint.AuthURL, TokenURL: oc.Endpoint.TokenURL, AuthStyle: int(oc.Endpoint.AuthStyle),
				Scopes: oc.Scopes, Token: tok, Issuer: origin(oc.Endpoint.TokenURL), DPoPKey: key,
			}
			if err := h.store.SaveToken(ctx, h.key, st); err != nil {
				return nil, fmt.Errorf("saving the OAuth token: %w", err)
			}
			return h.persisting(st, oc.TokenSource(h.tokenCtx(), tok)), nil
		},
	}
	if len(a.Scopes) > 0 {
		scopes := a.Scopes
		c.ScopeFilter = func([]string) []string { return scopes }
	}
	// go-sdk tries these in order: the client ID metadata document where the authorization
	// server supports one, the pre-registered client, dynamic registration.
	if a.ClientMetadataURL != "" {
		c.ClientIDMetadataDocumentConfig = &sdkauth.ClientIDMetadataDocumentConfig{URL: a.ClientMetadataURL}
	}
	if a.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: a.ClientID}
		if a.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: a.ClientSecret}
		}
		c.PreregisteredClient = pc
	}
	if a.ClientID == "" {
		c.DynamicClientRegistrationConfig = &sdkauth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{h.set.RedirectURL},
			ClientName:              "mcpbridge",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	inner, err = sdkauth.NewAuthorizationCodeHandler(c)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inner == nil {
		h.inner = inner
	}
	return h.inner, nil
}

// SaveTimeout bounds one SaveToken of a refreshed token (made off the fetch path).
const SaveTimeout = 30 * time.Second

// persisting wraps ts so that every new token (a refresh) is saved under the handler's key.
func (h *Handler) persisting(st *StoredToken, ts oauth2.TokenSource) oauth2.TokenSource {
	if _, ok := h.store.(TokenLocker); ok {
		return h.shared(st, "")
	}
	s := &savingSource{h: h, st: *st, ts: ts, last: st.Token.AccessToken}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Keep the sources with a save under way (for Flush), and the new one.
	kept := h.savers[:0]
	for _, o := range h.savers {
		o.mu.Lock()
		busy := o.idle != nil
		o.mu.Unlock()
		if busy {
			kept = append(kept, o)
		}
	}
	h.savers = append(kept, s)
	return s
}

// savingSource is a token source whose new tokens are saved to the store by a writer
// goroutine of its own: newest last, each save bounded by SaveTimeout, never on the path of
// a token fetch (go-sdk fetches the token under its connection's lock before every request).
type savingSource struct {
	h  *Handler
	ts oauth2.TokenSource

	mu      sync.Mutex // guards the fields below; a leaf
	st      StoredToken
	last    string        // the newest access token seen
	gen     uint64        // counts new tokens
	saved   uint64        // the gen the store has (or whose save was given up)
	writing bool          // the writer goroutine runs
	idle    chan struct{} // closed when saved caught up with gen; nil when it has
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	tok, err := s.ts.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		s.st.Token = tok
		s.gen++
		if s.idle == nil {
			s.idle = make(chan struct{})
		}
		if !s.writing {
			s.writing = true
			go s.write()
		}
	}
	return tok, nil
}

// write saves the newest grant until the store has it.
func (s *savingSource) write() {
	for {
		s.mu.Lock()
		if s.saved == s.gen {
			s.writing = false
			if s.idle != nil {
				close(s.idle)
				s.idle = nil
			}
			s.mu.Unlock()
			return
		}
		gen, st := s.gen, s.st
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), SaveTimeout)
		err := s.h.store.SaveToken(ctx, s.h.key, &st)
		cancel()
		if err != nil {
			s.h.log.Warn("saving the refreshed OAuth token failed", "err", err)
		}
		s.mu.Lock()
		s.saved = gen
		s.mu.Unlock()
	}
}

// Flush waits until every refreshed token has been saved (or its save given up), or ctx
// ends, so that a host closing the server keeps the refresh it made.
func (h *Handler) Flush(ctx context.Context) {
	h.mu.Lock()
	savers := h.savers
	h.mu.Unlock()
	for _, s := range savers {
		s.mu.Lock()
		idle := s.idle
		s.mu.Unlock()
		if idle == nil {
			continue
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
}

// Probe is what probe shows about h's grant (Status; nil when h is nil: no OAuth).
func (h *Handler) Probe() *AuthStatus {
	if h == nil {
		return nil
	}
	st := h.Status()
	return &st
}

// Status is what probe shows; it needs the current token, which may refresh it.
func (h *Handler) Status() AuthStatus {
	h.mu.Lock()
	ts := h.ts
	h.mu.Unlock()
	as := AuthStatus{Type: h.auth.Type, GrantType: grantType(h.auth.Type)}
	if h.dpop.binding() != nil {
		as.Binding = "dpop"
	}
	if ts == nil {
		return as
	}
	tok, err := ts.Token()
	if s, ok := ts.(*sharedSource); ok {
		tok, err = s.TokenContext(context.Background()) // the refreshed token; bounded by refreshTimeout
	}
	if err == nil {
		as.Expiry, as.RefreshToken = tok.Expiry, tok.RefreshToken != ""
	}
	return as
}

// origin is u's scheme and host, for naming an issuer without its path or query.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// attemptKey is the context key of a connection attempt.
type attemptKey struct{}

// Attempt is one connection attempt of a server (a dial or a redial, its protocol
// negotiation included): an interactive authorization that failed in it is not started
// again in it.
type Attempt struct {
	mu  sync.Mutex // a leaf
	err error
}

// WithAttempt returns ctx marking a new connection attempt.
func WithAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, attemptKey{}, &Attempt{})
}

// CopyAttempt returns to carrying the attempt of from, if any (an attempt's session context
// does not derive from the context that bounds the attempt).
func CopyAttempt(from, to context.Context) context.Context {
	if a := attemptFrom(from); a != nil {
		return context.WithValue(to, attemptKey{}, a)
	}
	return to
}

func attemptFrom(ctx context.Context) *Attempt {
	a, _ := ctx.Value(attemptKey{}).(*Attempt)
	return a
}

func (a *Attempt) failure() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *Attempt) fail(err error) {
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.mu.Unlock()
}
