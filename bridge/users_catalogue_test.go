package bridge_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/apps"
	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// catalogueServer is a local OAuth-protected server with the tool whoami and, for alice and
// bob, a tool only that user lists and may call (oauthtest.OwnTools). anon is what it
// answers without a token: "all" but tools/call, "init" (initialize and server/discover,
// not tools/list) or "none"; scope and ttl, when scope is set, are the cacheScope and ttlMs
// of its listings.
func catalogueServer(t *testing.T, kind, anon, scope string, ttl time.Duration) (as *oauthtest.Server, wrong, lists *atomic.Int64) {
	as, wrong, lists, _ = catalogueServerMCP(t, kind, anon, scope, ttl)
	return as, wrong, lists
}

// catalogueServerMCP is catalogueServer, also returning the MCP server.
func catalogueServerMCP(t *testing.T, kind, anon, scope string, ttl time.Duration) (as *oauthtest.Server, wrong, lists *atomic.Int64, srv *mcp.Server) {
	t.Helper()
	wrong, lists = new(atomic.Int64), new(atomic.Int64)
	opts := &mcp.ServerOptions{}
	if scope != "" {
		opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.CacheScope, c.TTLMs = scope, int(ttl/time.Millisecond)
		}
	}
	srv = mcp.NewServer(&mcp.Implementation{Name: "catalogue", Version: "1"}, opts)
	oauthtest.UserTool(srv, wrong)
	oauthtest.OwnTools(srv, wrong, lists, "alice", "bob")
	as = oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: kind == stateless, Logger: discard()})
	switch anon {
	case "all":
		as.AllowAnonymous("initialize", "notifications/initialized", "server/discover", "tools/list")
	case "init":
		as.AllowAnonymous("initialize", "notifications/initialized", "server/discover")
	}
	t.Cleanup(as.Close)
	return as, wrong, lists, srv
}

// loginTo authorizes server svc for user through the web login, without calling a tool.
func loginTo(t *testing.T, ctx context.Context, set *bridge.Set, user string) {
	t.Helper()
	u, err := set.StartLogin(ctx, user, "svc")
	if err != nil {
		t.Fatalf("user %q: start login: %v", user, err)
	}
	q, err := oauthtest.Consent(ctx, u, user)
	if err != nil {
		t.Fatalf("user %q: consent: %v", user, err)
	}
	if err := set.CompleteLogin(ctx, user, q); err != nil {
		t.Fatalf("user %q: complete login: %v", user, err)
	}
}

func toolNames(tools []bridge.Tool) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// callAs calls tool tl for user with the arguments whoami takes, and decodes its answer.
func callAs(ctx context.Context, tl bridge.Tool, user string) (string, error) {
	args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(user)})
	out, err := tl.Handler(bridge.WithUser(ctx, user), args)
	if err != nil {
		return out, err
	}
	b, err := hex.DecodeString(out)
	return string(b), err
}

// TestCatalogueSharedOrPerUser fails when a catalogue is shared although the server did
// not allow it (cacheScope "private", also where tools/list needs the user's grant or the
// server opens only with a user's grant), or kept per user although it did; when a user's
// listing is served to another user, listed again within its ttlMs, or kept past it; or
// when a user can call a tool of another user's catalogue.
func TestCatalogueSharedOrPerUser(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    string
		anon    string // what the server answers without a token (catalogueServer)
		scope   string
		ttl     time.Duration
		perUser bool
		relists bool // every ToolsFor lists again (ttlMs 0)
	}{
		{"public", stateful, "all", "", 0, false, false},
		{"public stateless", stateless, "all", "public", time.Hour, false, false},
		{"private", stateful, "all", "private", time.Hour, true, false},
		{"private stateless", stateless, "all", "private", time.Hour, true, false},
		{"private ttl 0", stateless, "all", "private", 0, true, true},
		// A server that lists with a user's grant and says public shares the first user's
		// listing with every user (TestPublicCatalogueListedOnce); these list each user's
		// own tools, so they say private.
		{"tools/list needs a grant", stateful, "init", "private", 0, true, true},
		{"tools/list needs a grant stateless", stateless, "init", "private", 0, true, true},
		{"everything needs a grant", stateful, "none", "private", 0, true, true},
		{"everything needs a grant stateless", stateless, "none", "private", 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, wrong, lists := catalogueServer(t, tc.kind, tc.anon, tc.scope, tc.ttl)
			set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
			ctx := ctxT(t, 60*time.Second)
			shared := toolNames(set.Tools())
			if tc.perUser {
				if len(shared) != 0 {
					t.Fatalf("shared catalogue %v, want none of a per-user server's tools", shared)
				}
			} else if !slices.Equal(shared, []string{"whoami"}) {
				t.Fatalf("shared catalogue %v, want [whoami] (the anonymous listing)", shared)
			}
			for _, u := range []string{"alice", "bob"} {
				loginTo(t, ctx, set, u)
			}

			own := map[string]bridge.Tools{}
			for _, u := range []string{"alice", "bob"} {
				tools, err := set.ToolsFor(bridge.WithUser(ctx, u))
				if err != nil {
					t.Fatalf("%s: ToolsFor: %v", u, err)
				}
				want := []string{"whoami"}
				if tc.perUser {
					want = []string{"only_" + u, "whoami"}
				}
				if got := toolNames(tools); !slices.Equal(got, want) {
					t.Fatalf("%s's tools %v, want %v", u, got, want)
				}
				own[u] = tools
			}

			// Many calls of both users at once, each with the tools of its own listing.
			var wg sync.WaitGroup
			errc := make(chan error, 40)
			for _, u := range []string{"alice", "bob"} {
				for range 10 {
					wg.Go(func() {
						for _, tl := range own[u] {
							if out, err := callAs(ctx, tl, u); err != nil || out != u {
								errc <- fmt.Errorf("%s calling %s: %q, %v", u, tl.Name, out, err)
							}
						}
					})
				}
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Error(err)
			}

			if tc.perUser {
				// Bob holding alice's tool is refused before anything is sent.
				if _, err := callAs(ctx, byName(t, own["alice"], "only_alice"), "bob"); !errors.Is(err, bridge.ErrUnknownTool) {
					t.Errorf("bob calling alice's tool: %v, want ErrUnknownTool", err)
				}
				// A user without a grant gets the shared tools and a needs-login error.
				tools, err := set.ToolsFor(bridge.WithUser(ctx, "carol"))
				var nle *bridge.NeedsLoginError
				if !errors.As(err, &nle) || nle.User != "carol" || nle.Server != "svc" || len(tools) != 0 {
					t.Errorf("carol without a grant: %v, %v; want no tool and a *NeedsLoginError", toolNames(tools), err)
				}
				// A call without a user is refused.
				if _, err := own["alice"][0].Handler(ctx, json.RawMessage(`{}`)); err == nil {
					t.Error("a per-user tool called without a user")
				}
				// An App's call through the proxy resolves in its user's catalogue too.
				proxy := func(user string) (json.RawMessage, error) {
					return set.Proxy(bridge.WithUser(ctx, user), apps.ProxyRequest{ServerID: "svc", Method: "tools/call",
						Params: json.RawMessage(`{"name":"only_alice","arguments":{"user":"` + oauthtest.UserArg(user) + `"}}`)})
				}
				if out, err := proxy("alice"); err != nil || !strings.Contains(string(out), oauthtest.UserArg("alice")) {
					t.Errorf("alice's App calling her tool: %s, %v", out, err)
				}
				if _, err := proxy("bob"); !errors.Is(err, apps.ErrToolNotAllowed) {
					t.Errorf("bob's App calling alice's tool: %v, want ErrToolNotAllowed", err)
				}
			}

			// Sessions per user only on the stateful server: a stateless one that opens only
			// with a user's grant has the users' connection instead of a shared one.
			sessions := 0
			if tc.kind == stateful {
				sessions = 2
			}
			if n := set.Servers()[0].UserSessions(); n != sessions {
				t.Errorf("%d user sessions, want %d", n, sessions)
			}

			// Within ttlMs a user's listing is served from its cache; with ttlMs 0 listed again.
			before := lists.Load()
			if _, err := set.ToolsFor(bridge.WithUser(ctx, "alice")); err != nil {
				t.Fatal(err)
			}
			if got := lists.Load() - before; (got == 1) != tc.relists || got > 1 {
				t.Errorf("ToolsFor listed %d times, want relisting %v", got, tc.relists)
			}
			if n := wrong.Load(); n != 0 {
				t.Fatalf("%d requests carried another user's token", n)
			}
		})
	}
}

// TestToolsForNeedsAUser: ToolsFor names no tools without a valid user.
func TestToolsForNeedsAUser(t *testing.T) {
	as, _, _ := catalogueServer(t, stateful, "all", "private", time.Hour)
	set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	ctx := ctxT(t, 30*time.Second)
	for _, c := range []context.Context{ctx, bridge.WithUser(ctx, "")} {
		if tools, err := set.ToolsFor(c); !errors.Is(err, bridge.ErrInvalidUser) || tools != nil {
			t.Errorf("ToolsFor without a valid user: %v, %v", toolNames(tools), err)
		}
	}
}

// TestUserCatalogueFollowsListChanged: a tools/list_changed makes a user's cached listing
// stale before its ttlMs ends, and the users' shared one (a public listing made with a
// user's grant) too.
func TestUserCatalogueFollowsListChanged(t *testing.T) {
	for _, tc := range []struct{ name, anon, scope string }{
		{"private", "all", "private"},
		{"public, listed with a grant", "init", "public"},
	} {
		t.Run(tc.name, func(t *testing.T) { testUserCatalogueFollowsListChanged(t, tc.anon, tc.scope) })
	}
}

func testUserCatalogueFollowsListChanged(t *testing.T, anon, scope string) {
	as, _, _, srv := catalogueServerMCP(t, stateful, anon, scope, time.Hour)
	set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	ctx := ctxT(t, 30*time.Second)
	loginTo(t, ctx, set, "alice")
	alice := bridge.WithUser(ctx, "alice")
	if tools, err := set.ToolsFor(alice); err != nil || !slices.Equal(toolNames(tools), []string{"only_alice", "whoami"}) {
		t.Fatalf("alice's tools: %v, %v", toolNames(tools), err)
	}
	srv.AddTool(&mcp.Tool{Name: "extra", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	want := []string{"extra", "only_alice", "whoami"}
	for {
		tools, err := set.ToolsFor(alice)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(toolNames(tools), want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("alice's tools %v after the change, want %v", toolNames(tools), want)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestPublicCatalogueListedOnce fails when the catalogue of a server that lists its tools
// only with a user's grant, and says they are public (cacheScope "public", or absent: the
// default), is listed more than once for many users (it is every user's, listed with the
// first one's grant), or when a private one is shared; when a user without a grant gets its
// tools; or when a call carries another user's token.
func TestPublicCatalogueListedOnce(t *testing.T) {
	const users = 8
	for _, tc := range []struct {
		name  string
		kind  string
		anon  string // what the server answers without a token (catalogueServer)
		scope string // "": the SDK's default (public)
		lists int64  // tools/list the server answers for all the users' ToolsFor and calls
	}{
		{"tools/list needs a grant", stateful, "init", "", 1},
		{"tools/list needs a grant stateless", stateless, "init", "", 1},
		{"public", stateful, "init", "public", 1},
		{"everything needs a grant", stateful, "none", "", 1},
		{"everything needs a grant stateless", stateless, "none", "public", 1},
		{"private", stateful, "init", "private", users * 2}, // ttlMs 0: listed at each ToolsFor
		{"private stateless", stateless, "none", "private", users * 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wrong, lists atomic.Int64
			opts := &mcp.ServerOptions{}
			if tc.scope != "" {
				opts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = tc.scope }
			}
			srv := mcp.NewServer(&mcp.Implementation{Name: "catalogue", Version: "1"}, opts)
			oauthtest.UserTool(srv, &wrong)
			oauthtest.OwnTools(srv, &wrong, &lists) // counts the listings
			as := oauthtest.NewWith(srv, &mcp.StreamableHTTPOptions{Stateless: tc.kind == stateless, Logger: discard()})
			if tc.anon == "init" {
				as.AllowAnonymous("initialize", "notifications/initialized", "server/discover")
			}
			t.Cleanup(as.Close)
			set := usersSet(t, as, &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
			ctx := ctxT(t, 60*time.Second)
			if n := len(set.Tools()); n != 0 {
				t.Fatalf("%d shared tools, want none (tools/list needs a grant)", n)
			}
			var names []string
			for i := range users {
				names = append(names, fmt.Sprintf("user%d", i))
				loginTo(t, ctx, set, names[i])
			}
			if n := lists.Load(); n != 0 {
				t.Fatalf("%d listings before any user asked, want 0", n)
			}

			// Every user at once, then again one after another, then each calls whoami.
			toolsOf := func(user string) (bridge.Tools, error) {
				tools, err := set.ToolsFor(bridge.WithUser(ctx, user))
				if err == nil && !slices.Equal(toolNames(tools), []string{"whoami"}) {
					err = fmt.Errorf("tools %v, want [whoami]", toolNames(tools))
				}
				return tools, err
			}
			var wg sync.WaitGroup
			errc := make(chan error, users)
			for _, u := range names {
				wg.Go(func() {
					if _, err := toolsOf(u); err != nil {
						errc <- fmt.Errorf("%s: %w", u, err)
					}
				})
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			for _, u := range names {
				tools, err := toolsOf(u)
				if err != nil {
					t.Fatalf("%s: %v", u, err)
				}
				if out, err := callAs(ctx, tools[0], u); err != nil || out != u {
					t.Fatalf("%s calling whoami: %q, %v", u, out, err)
				}
			}
			if got := lists.Load(); got != tc.lists {
				t.Errorf("the server answered %d tools/list for %d users, want %d", got, users, tc.lists)
			}

			// A user without a grant gets no tool, and the login to make.
			tools, err := set.ToolsFor(bridge.WithUser(ctx, "carol"))
			if nl := bridge.NeedsLogins(err); len(tools) != 0 || len(nl) != 1 || nl[0].User != "carol" || nl[0].Reason != bridge.ReasonNoGrant {
				t.Errorf("carol without a grant: %v, %v; want no tool and her login", toolNames(tools), err)
			}
			if n := wrong.Load(); n != 0 {
				t.Fatalf("%d requests carried another user's token", n)
			}
		})
	}
}
