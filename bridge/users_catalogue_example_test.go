package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
