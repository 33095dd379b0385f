package bridge_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// A web host serving several users, each with their own grant for the same OAuth-protected
// server (a local one: its authorization endpoint consents at once for the user its
// login_hint names, and its tool whoami answers with the user of the request's token). The
// app's /chat calls a tool for the user of the request's session; a user without a grant is
// sent to the authorization server, and /callback completes that user's login.
func Example_users() {
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "tracker", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.New(srv)
	defer as.Close()
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	defer app.Close()

	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "tracker", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, &bridge.Options{
		Logger:     slog.New(slog.DiscardHandler),
		TokenStore: &bridge.FileTokenStore{Path: filepath.Join(dir, "tokens.json")}, // a fleet: redisstore
		Users:      &bridge.UserOptions{RedirectURL: app.URL + "/callback"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	whoami := set.Tools()[0]

	// sessionUser is the app's own login (here a header instead of a session cookie).
	sessionUser := func(r *http.Request) string { return r.Header.Get("X-User") }
	mux.HandleFunc("/chat", func(w http.ResponseWriter, r *http.Request) {
		user := sessionUser(r)
		args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(user)})
		out, err := whoami.Handler(bridge.WithUser(r.Context(), user), args)
		var nle *bridge.NeedsLoginError
		if errors.As(err, &nle) {
			u, err := nle.AuthorizationURL(r.Context())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			http.Redirect(w, r, u, http.StatusFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		b, _ := hex.DecodeString(out)
		fmt.Fprintf(w, "the tracker says you are %s", b)
	})
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		if err := set.CompleteLogin(r.Context(), sessionUser(r), r.URL.Query()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "/chat", http.StatusFound)
	})

	// Each user's browser: /chat, the authorization server, /callback, /chat again.
	browse := func(user, path string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-User", user)
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, user := range []string{"ada", "grace"} {
		resp, _ := browse(user, app.URL+"/chat")
		fmt.Println(user, "first visit:", resp.StatusCode)
		back, err := oauthtest.Consent(ctx, resp.Header.Get("Location"), user)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp, _ = browse(user, app.URL+"/callback?"+back.Encode())
		fmt.Println(user, "callback:", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, user := range []string{"ada", "grace"} {
		_, body := browse(user, app.URL+"/chat")
		fmt.Println(user, "chat:", body)
	}
	// A callback replayed for another user finds no login waiting.
	_, body := browse("mallory", app.URL+"/callback?"+url.Values{"state": {"stolen"}, "code": {"x"}}.Encode())
	fmt.Print("replayed callback: ", body)
	fmt.Println("requests with another user's token:", wrong.Load())
	// Output:
	// ada first visit: 302
	// ada callback: 302 /chat
	// grace first visit: 302
	// grace callback: 302 /chat
	// ada chat: the tracker says you are ada
	// grace chat: the tracker says you are grace
	// replayed callback: login: no login is waiting for this state (unknown, completed or expired)
	// requests with another user's token: 0
}
