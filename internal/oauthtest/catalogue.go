package oauthtest

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Per-user catalogues: tools only some users see.

// OwnToolPrefix starts the name of a tool OwnTools gives one user: OwnToolPrefix+user.
const OwnToolPrefix = "only_"

// OwnTools adds to srv, for each of users (IDs that are valid tool names), a tool
// "only_<user>" that only that user's tools/list shows (the listing is filtered by the
// request's token; a listing without a token shows none of them). Like UserTool's whoami it
// takes the caller's UserArg as "user" and answers with it, counting in wrong a call by
// anyone else or with another user's token. It also counts every
// tools/list request in lists.
func OwnTools(srv *mcp.Server, wrong, lists *atomic.Int64, users ...string) {
	for _, u := range users {
		mcp.AddTool(srv, &mcp.Tool{Name: OwnToolPrefix + u, Description: "a tool of " + u + " only"}, func(_ context.Context, req *mcp.CallToolRequest, args struct {
			User string `json:"user"`
		}) (*mcp.CallToolResult, any, error) {
			ti := req.Extra.TokenInfo
			if ti == nil || ti.UserID != u || UserArg(ti.UserID) != args.User {
				wrong.Add(1)
				return nil, nil, errors.New("this tool is not the caller's")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: UserArg(ti.UserID)}}}, nil, nil
		})
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if method != "tools/list" || err != nil || !ok {
				return res, err
			}
			lists.Add(1)
			user := ""
			if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
				user = ex.TokenInfo.UserID
			}
			kept := make([]*mcp.Tool, 0, len(lr.Tools))
			for _, t := range lr.Tools {
				if len(t.Name) < len(OwnToolPrefix) || t.Name[:len(OwnToolPrefix)] != OwnToolPrefix || t.Name == OwnToolPrefix+user {
					kept = append(kept, t)
				}
			}
			out := *lr
			out.Tools = kept
			return &out, nil
		}
	})
}
