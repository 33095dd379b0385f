package oauthtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Many users: the authorization endpoint gives the code to the person its login_hint
// names, every token it issues from that code (and every refresh of it) belongs to that
// person, and the MCP server sees the person as the token's auth.TokenInfo.UserID.

// usersState is whose tokens are whose; guarded by Server.mu.
type usersState struct {
	owner map[string]string // access or refresh token -> the user it was issued to
	spent map[string]int    // a rotated-away refresh token -> times it was presented again
	anon  []string          // MCP methods answered without a token
}

// own records that tok belongs to user; a.mu is held.
func (u *usersState) own(tok, user string) {
	if u.owner == nil {
		u.owner = map[string]string{}
	}
	u.owner[tok] = user
}

// spentAgain counts a refresh token presented after it was spent; a.mu is held.
func (u *usersState) spentAgain(rt string) {
	if _, ok := u.owner[rt]; !ok {
		return // never issued: not a double spend
	}
	if u.spent == nil {
		u.spent = map[string]int{}
	}
	u.spent[rt]++
}

// AllowAnonymous lets MCP requests of the given methods (e.g. "initialize",
// "notifications/initialized", "tools/list") and GET and DELETE requests through without a
// token: a server whose catalogue is public while its tools need the caller's grant.
func (a *Server) AllowAnonymous(methods ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.users.anon = slices.Clone(methods)
}

// DoubleSpent is how many times a refresh token was presented again after it was spent
// (rotated away), over all tokens: 0 when no two refreshes raced for one token.
func (a *Server) DoubleSpent() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.users.spent {
		n += c
	}
	return n
}

// RevokeRefreshOf revokes the refresh tokens of one user only.
func (a *Server) RevokeRefreshOf(user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for rt := range a.refresh {
		if a.users.owner[rt] == user {
			delete(a.refresh, rt)
		}
	}
}

// ExpireOf makes the access tokens of one user invalid.
func (a *Server) ExpireOf(user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for at := range a.access {
		if a.users.owner[at] == user {
			delete(a.access, at)
		}
	}
}

// anonymous lets a request through without a token when AllowAnonymous names its method
// (a single JSON-RPC message, not a batch) and it carries no Authorization header.
func (a *Server) anonymous(protected http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		anon := a.users.anon
		a.mu.Unlock()
		if len(anon) == 0 || r.Header.Get("Authorization") != "" {
			protected.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodDelete {
			protected.ServeHTTP(w, r) // answered below without TokenInfo
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || !slices.Contains(anon, m.Method) {
			protected.ServeHTTP(w, r)
			return
		}
		a.unprotected.ServeHTTP(w, r)
	})
}

// Consent plays user's browser: it follows authURL (adding login_hint=user) to the
// authorization endpoint, which consents at once, and returns the query of the redirect
// back to the client (code, state, iss; or error).
func Consent(ctx context.Context, authURL, user string) (url.Values, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("login_hint", user)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("authorization endpoint answered %s", resp.Status)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return to.Query(), nil
}

// UserArg is how UserTool's "user" argument and answer name a user ID: hex, since an ID's
// bytes need not be UTF-8 and JSON strings must be.
func UserArg(id string) string { return hex.EncodeToString([]byte(id)) }

// UserTool adds the tool "whoami" to srv: it answers with UserArg of the user its
// request's token belongs to, and counts in wrong every call whose token belongs to someone
// other than its "user" argument (UserArg of the caller) or that carries no token: a
// cross-user token use.
func UserTool(srv *mcp.Server, wrong *atomic.Int64) {
	type in struct {
		User string `json:"user"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "the caller's user"}, func(_ context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		ti := req.Extra.TokenInfo
		if ti == nil || UserArg(ti.UserID) != args.User {
			wrong.Add(1)
			return nil, nil, errors.New("this request's token is not the caller's")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: UserArg(ti.UserID)}}}, nil, nil
	})
}

// withUser gives a request that protect admitted with a Bearer token the token's user as
// its auth.TokenInfo (UserID), which tools read from their request's Extra.
func (a *Server) withUser(next http.Handler) http.Handler {
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		t, ok := a.access[tok]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: t.exp, Scopes: []string{"read"}, UserID: a.users.owner[tok]}, nil
	}
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if kind, _, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(kind, "Bearer") {
			bearer.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
