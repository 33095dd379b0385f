package bridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/oauthtest"
)

// A per-user server's tasks run on each user's own session and are followed by the
// notifications of that session only: a stateless 2026-07-28 server behind OAuth, two users
// with a task each, a minute between polls. The server first sends the end of alice's task,
// with a forged result, on bob's listen stream: alice's call must not take it. Bob's own
// notification ends bob's call, alice's own (sent after) ends hers, neither polls.
func TestUserTasksFollowTheirOwnSession(t *testing.T) {
	fx := newTaskServer(true)
	fx.poll = 60000 // the bridge polls after 30 s: past the calls' 20 s
	fx.subscribed = make(chan string, 4)
	type taskOf struct {
		user string
		tk   *fxTask
	}
	started := make(chan taskOf, 2)
	finish := map[string]chan string{"alice": make(chan string), "bob": make(chan string)}
	fx.tool("job", "required", func(ctx context.Context, tk *fxTask) {
		var args struct{ User string }
		_ = json.Unmarshal(tk.args, &args)
		user := map[string]string{oauthtest.UserArg("alice"): "alice", oauthtest.UserArg("bob"): "bob"}[args.User]
		if user == "" {
			tk.complete("unknown user " + args.User)
			return
		}
		started <- taskOf{user, tk}
		select {
		case text := <-finish[user]:
			tk.complete(text)
		case <-time.After(25 * time.Second): // the test gave up
			tk.complete("abandoned")
		}
	})
	gets := map[string]int{} // per task ID; under fx.mu
	fx.getHook = func(tk *fxTask, answer map[string]any) any {
		gets[tk.id]++
		return answer
	}
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.srv }, &mcp.StreamableHTTPOptions{Stateless: true, Logger: discard()})
	as := oauthtest.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !fx.serveTaskListen(w, r) {
			mh.ServeHTTP(w, r)
		}
	}))
	as.AllowAnonymous("initialize", "notifications/initialized", "tools/list", "server/discover")
	t.Cleanup(as.Close)
	o := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	o.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}
	set, err := connectSet(t, []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}, o)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	ctx := ctxT(t, 20*time.Second)
	for _, u := range []string{"alice", "bob"} {
		loginTo(t, ctx, set, u)
	}
	h := byName(t, set.Tools(), "job").Handler
	type outcome struct {
		text string
		err  error
	}
	done := map[string]chan outcome{}
	for _, u := range []string{"alice", "bob"} {
		done[u] = make(chan outcome, 1)
		go func() {
			text, err := h(bridge.WithUser(ctx, u), json.RawMessage(`{"user":"`+oauthtest.UserArg(u)+`"}`))
			done[u] <- outcome{text, err}
		}()
	}
	tasks := map[string]*fxTask{}
	for range 2 {
		select {
		case s := <-started:
			tasks[s.user] = s.tk
		case <-ctx.Done():
			t.Fatalf("the users' tasks did not start: %v", ctx.Err())
		}
	}
	for range 2 {
		select {
		case <-fx.subscribed:
		case <-ctx.Done():
			t.Fatalf("the users' sessions did not subscribe to their tasks: %v", ctx.Err())
		}
	}
	listener := func(user string) notifier {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		l := fx.listened[tasks[user].id]
		if len(l) != 1 {
			t.Fatalf("%d subscriptions name %s's task, want 1", len(l), user)
		}
		return l[0]
	}
	aliceL, bobL := listener("alice"), listener("bob")
	if aliceL == bobL {
		t.Fatal("one subscription names both users' tasks: want one per user's session")
	}
	ended := func(user string) {
		t.Helper()
		finish[user] <- user + " done"
		deadline := time.Now().Add(10 * time.Second)
		for {
			fx.mu.Lock()
			st := tasks[user].status
			fx.mu.Unlock()
			if st == "completed" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's task did not complete", user)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Alice's task ends; its notification, forged, goes on bob's stream only.
	ended("alice")
	forged := tasks["alice"].detailed()
	forged["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "forged on bob's session"}}}
	bobL.notify(fx.statusMethod(), forged)
	// Bob's task ends and is told on his stream, after the forged one.
	ended("bob")
	bobL.notify(fx.statusMethod(), tasks["bob"].detailed())
	if o := <-done["bob"]; o.err != nil || o.text != "bob done" {
		t.Fatalf("bob's call = %q, %v; want his task's result", o.text, o.err)
	}
	select {
	case o := <-done["alice"]:
		t.Fatalf("alice's call ended on a notification of bob's session: %q, %v", o.text, o.err)
	default:
	}
	aliceL.notify(fx.statusMethod(), tasks["alice"].detailed())
	if o := <-done["alice"]; o.err != nil || o.text != "alice done" {
		t.Fatalf("alice's call = %q, %v; want her task's result", o.text, o.err)
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if len(gets) != 0 {
		t.Errorf("tasks/get per task %v; want none: each user's own notification ends the call", gets)
	}
}
