package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
	"github.com/ttalk/mcpbridge/internal/redistest"
)

// consenting plays the person at the browser: it follows the authorization URL to the
// redirect and hands back the code and state.
func consenting() *bridge.Authorizer {
	return &bridge.Authorizer{
		RedirectURL: "http://127.0.0.1:9/callback",
		Fetch: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			to, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || to.Query().Get("code") == "" {
				return nil, fmt.Errorf("authorization answered %d without a code", resp.StatusCode)
			}
			return &auth.AuthorizationResult{Code: to.Query().Get("code"), State: to.Query().Get("state"), Iss: to.Query().Get("iss")}, nil
		},
	}
}

// A Set connected while Redis answers nobody skips the OAuth server whose start-up needs
// the stored grant, with a store error (bridge.ErrTokenStore). Once Redis answers again the
// server is started again in the background: it rejoins the Set (Servers, Tools, Failed),
// OnToolsChanged and OnStatus say so, and its tool calls. Close ends the retries: no
// goroutine is left.
func TestServerRejoinsWhenTheStoreReturns(t *testing.T) {
	addr, store := pausableStore(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes its text"}, func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
	})
	as := oauthtest.New(srv)
	t.Cleanup(as.Close)
	cfgs := []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A first Set logs in once: the grant is in Redis.
	first, err := bridge.Connect(ctx, cfgs, &bridge.Options{TokenStore: store, Authorizer: consenting(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil || len(first.Failed()) > 0 {
		t.Fatalf("connect with a login: %v %v", err, first.Failed())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	before := runtime.NumGoroutine()
	var mu sync.Mutex
	var statuses []bridge.ServerStatus
	var changes []bridge.ToolsChange
	opts := &bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler), ConnectTimeout: 20 * time.Second,
		OnStatus: func(_ context.Context, st bridge.ServerStatus) {
			mu.Lock()
			statuses = append(statuses, st)
			mu.Unlock()
		},
		OnToolsChanged: func(_ context.Context, ch bridge.ToolsChange) {
			mu.Lock()
			changes = append(changes, ch)
			mu.Unlock()
		}}
	// Redis answers nobody for 3 s (the store's timeout is 300 ms) while the Set connects.
	if r, err := redistest.Do(addr, "CLIENT", "PAUSE", "3000", "ALL"); err != nil || r != "OK" {
		t.Fatalf("pausing redis: %q %v", r, err)
	}
	set, err := bridge.Connect(ctx, cfgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrTokenStore) || errors.Is(f[0], bridge.ErrNeedsLogin) {
		t.Fatalf("failed while the store is down: %v (want one store error)", f)
	}
	if len(set.Servers()) != 0 || len(set.Tools()) != 0 {
		t.Fatalf("while the store is down: servers %d, tools %d", len(set.Servers()), len(set.Tools()))
	}

	waitFor(t, "the server to rejoin the set", func() bool { return len(set.Servers()) == 1 })
	if f := set.Failed(); len(f) != 0 {
		t.Errorf("failed after the rejoin: %v", f)
	}
	tools := set.Tools()
	if len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools after the rejoin: %v", tools)
	}
	cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
	defer ccancel()
	if out, err := tools[0].Handler(cctx, []byte(`{"text":"back"}`)); err != nil || out != "back" {
		t.Errorf("call after the rejoin: %q %v", out, err)
	}
	waitFor(t, "OnToolsChanged for the rejoin", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) > 0
	})
	mu.Lock()
	if len(changes) != 1 || changes[0].Server != "svc" || !slices.Equal(changes[0].Added, []string{"echo"}) || len(changes[0].Removed) != 0 {
		t.Errorf("tools changes: %+v, want svc added echo", changes)
	}
	if len(statuses) != 2 || statuses[0].Err == nil || statuses[1].Err != nil || statuses[1].Retries < 1 || !slices.Equal(statuses[1].ModelTools, []string{"echo"}) {
		t.Errorf("statuses: %+v, want the failure at Connect, then the server back after a retry", statuses)
	}
	mu.Unlock()

	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "no goroutine of the set left", func() bool { return runtime.NumGoroutine() <= before })
}

// Close while the store is still down (paused longer than the wait for the goroutines to
// end) ends the retries at once: nothing is left running, and the server never rejoins.
func TestCloseStopsStoreRetries(t *testing.T) {
	addr, store := pausableStore(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	as := oauthtest.New(srv)
	t.Cleanup(as.Close)
	before := runtime.NumGoroutine()
	if r, err := redistest.Do(addr, "CLIENT", "PAUSE", "60000", "ALL"); err != nil || r != "OK" {
		t.Fatalf("pausing redis: %q %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}},
		&bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrTokenStore) {
		t.Fatalf("failed while the store is down: %v", f)
	}
	t0 := time.Now()
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	waitFor(t, "no goroutine of the set left", func() bool { return runtime.NumGoroutine() <= before })

	if n := len(set.Servers()); n != 0 {
		t.Errorf("%d servers after Close", n)
	}
}

// With many users, a server that needs a user's token for everything is kept for its users
// (no shared catalogue) once the store answers that no shared grant is stored; while Redis
// answers nobody at Connect it fails with a store error instead. Once Redis is back the
// retry keeps it for its users: it rejoins Servers (not Tools), OnToolsChanged and OnStatus
// say so, and a user who logs in then lists and calls its tool.
func TestUsersOnlyServerRejoinsWhenTheStoreReturns(t *testing.T) {
	addr, store := pausableStore(t)
	var wrong atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	oauthtest.UserTool(srv, &wrong)
	as := oauthtest.New(srv)
	t.Cleanup(as.Close)
	var mu sync.Mutex
	var statuses []bridge.ServerStatus
	var changes []bridge.ToolsChange
	opts := &bridge.Options{TokenStore: store, Logger: slog.New(slog.DiscardHandler), ConnectTimeout: 20 * time.Second,
		Users: &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback", RefreshJitter: -1},
		OnStatus: func(_ context.Context, st bridge.ServerStatus) {
			mu.Lock()
			statuses = append(statuses, st)
			mu.Unlock()
		},
		OnToolsChanged: func(_ context.Context, ch bridge.ToolsChange) {
			mu.Lock()
			changes = append(changes, ch)
			mu.Unlock()
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if r, err := redistest.Do(addr, "CLIENT", "PAUSE", "3000", "ALL"); err != nil || r != "OK" {
		t.Fatalf("pausing redis: %q %v", r, err)
	}
	set, err := bridge.Connect(ctx, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrTokenStore) || errors.Is(f[0], bridge.ErrNeedsLogin) {
		t.Fatalf("failed while the store is down: %v (want one store error)", f)
	}

	waitFor(t, "the server to rejoin the set", func() bool { return len(set.Servers()) == 1 })
	if f, tools := set.Failed(), set.Tools(); len(f) != 0 || len(tools) != 0 {
		t.Errorf("after the rejoin: failed %v, shared tools %d (want none: the catalogue is per user)", f, len(tools))
	}
	waitFor(t, "OnToolsChanged for the rejoin", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(changes) > 0
	})
	mu.Lock()
	if len(changes) != 1 || changes[0].Server != "svc" || len(changes[0].Added)+len(changes[0].Removed) != 0 {
		t.Errorf("tools changes: %+v, want svc with no shared tool", changes)
	}
	if len(statuses) != 2 || statuses[0].Err == nil || statuses[1].Err != nil || statuses[1].Retries < 1 {
		t.Errorf("statuses: %+v, want the failure at Connect, then the server back after a retry", statuses)
	}
	mu.Unlock()

	const u = "erin"
	logIn(t, ctx, set, u)
	uctx := bridge.WithUser(ctx, u)
	tools, err := set.ToolsFor(uctx)
	if err != nil || len(tools) != 1 {
		t.Fatalf("the user's tools after the rejoin: %v %v", tools, err)
	}
	args, _ := json.Marshal(map[string]string{"user": oauthtest.UserArg(u)})
	if out, err := tools[0].Handler(uctx, args); err != nil || out != oauthtest.UserArg(u) {
		t.Errorf("the user's call after the rejoin: %q %v", out, err)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d requests carried another user's token", n)
	}
}
