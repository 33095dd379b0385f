package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// A server whose tools differ per user marks its listings private (cacheScope, protocol
// 2026-07-28): the Set then shares none of its tools, and ToolsFor gives each user the
// tools that server listed for them, with their own token. (The local server lists the
// tool only_<user> to that user alone.)
func ExampleSet_ToolsFor() {
	var wrong, lists atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope, c.TTLMs = "private", 60_000 },
	})
	oauthtest.OwnTools(srv, &wrong, &lists, "ada", "grace")
	as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
	defer as.Close()
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "notes", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, &bridge.Options{
		Logger:     slog.New(slog.DiscardHandler),
		TokenStore: &bridge.FileTokenStore{Path: filepath.Join(dir, "tokens.json")},
		Users:      &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	fmt.Println("shared tools:", len(set.Tools()))

	for _, user := range []string{"ada", "grace"} { // their logins, as in Example_users
		u, err := set.StartLogin(ctx, user, "notes")
		if err != nil {
			fmt.Println(err)
			return
		}
		back, err := oauthtest.Consent(ctx, u, user)
		if err == nil {
			err = set.CompleteLogin(ctx, user, back)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, user := range []string{"ada", "grace", "linus"} {
		tools, err := set.ToolsFor(bridge.WithUser(ctx, user))
		var names []string
		for _, t := range tools {
			names = append(names, t.Name)
		}
		fmt.Println(user, names, "needs login:", errors.Is(err, bridge.ErrNeedsLogin))
	}
	// Output:
	// shared tools: 0
	// ada [only_ada] needs login: false
	// grace [only_grace] needs login: false
	// linus [] needs login: true
}

// ToolsFor joins the errors of the servers a user cannot list; NeedsLogins collects the
// logins among them, one per server, so a host can offer each. (Two local servers that list
// their tools only with a user's grant; ada has none yet, then logs in to notes.)
func ExampleNeedsLogins() {
	var cfgs []bridge.ServerConfig
	for _, id := range []string{"notes", "tracker"} {
		var wrong atomic.Int64
		srv := mcp.NewServer(&mcp.Implementation{Name: id, Version: "1"}, nil)
		oauthtest.UserTool(srv, &wrong)
		as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: true, Logger: slog.New(slog.DiscardHandler)})
		defer as.Close()
		as.AllowAnonymous("initialize", "notifications/initialized", "server/discover")
		cfgs = append(cfgs, bridge.ServerConfig{ID: id, URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}})
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	set, err := bridge.Connect(ctx, cfgs, &bridge.Options{
		Logger:     slog.New(slog.DiscardHandler),
		TokenStore: &bridge.FileTokenStore{Path: filepath.Join(dir, "tokens.json")},
		Users:      &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()

	ada := bridge.WithUser(ctx, "ada")
	show := func() {
		tools, err := set.ToolsFor(ada)
		fmt.Println("tools:", len(tools))
		for _, nle := range bridge.NeedsLogins(err) {
			_, err := nle.AuthorizationURL(ctx) // where the host sends ada's browser
			fmt.Printf("log in to %s (%s): %v\n", nle.Server, nle.Reason, err == nil)
		}
	}
	show()
	u, err := set.StartLogin(ctx, "ada", "notes")
	if err == nil {
		var back url.Values
		if back, err = oauthtest.Consent(ctx, u, "ada"); err == nil {
			err = set.CompleteLogin(ctx, "ada", back)
		}
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	show()
	// Output:
	// tools: 0
	// log in to notes (no grant is stored for the user): true
	// log in to tracker (no grant is stored for the user): true
	// tools: 1
	// log in to tracker (no grant is stored for the user): true
}
