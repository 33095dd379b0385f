package session_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/bridge/auth"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/transport"
)

// A pool opens the shared session on the first request, and a tools/call goes on the path
// the session chose (here the direct one: an in-process server).
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Name string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + in.Name}}}, nil, nil
	})
	life, stop := context.WithCancel(context.Background())
	log := slog.New(slog.DiscardHandler)
	pool := session.New(session.Config{
		ID: "greeter",
		Spec: transport.Spec{ID: "greeter", Logger: log, InProcess: func() (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			_, err := srv.Connect(context.Background(), st, nil)
			return ct, err
		}},
		Client:         mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil),
		Log:            log,
		Life:           life,
		ConnectTimeout: 10 * time.Second,
		Limits:         session.Limits{FirstBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, CloseWait: 5 * time.Second, MinDiscoverWait: time.Second, MaxDiscoverWait: 10 * time.Second, StderrTail: 2048},
		Host: session.Host{
			Fail:         func(phase string, err error, _ *transport.Conn) error { return fmt.Errorf("%s: %w", phase, err) },
			AsFail:       func(error) error { return nil },
			NeedsLogin:   func(_ string, reason auth.LoginReason) error { return errors.New(string(reason)) },
			IsNeedsLogin: func(error) bool { return false },
			ValidUser:    func(string) error { return nil },
			Opened:       func(transport.Kind, *session.Session) {},
			List:         func(context.Context, *session.Session) error { return nil },
			Relist:       func() {},
		},
	})
	defer pool.Close(stop)

	// The first session is opened and installed by its host (a redial installs its own).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := pool.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	pool.Install(sess, nil, func() {})

	var res *mcp.CallToolResult
	err = pool.Do(ctx, session.Request{Phase: "tools/call", What: `tool "greet"`, Timeout: 10 * time.Second}, func(ctx context.Context, sess *session.Session) error {
		var err error
		res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"Name": "pool"}}, session.CallOptions{})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	direct, sdk := pool.Paths().Direct.Load(), pool.Paths().SDK.Load()
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, "direct:", direct, "sdk:", sdk)
	// Output: hello, pool direct: 1 sdk: 0
}
