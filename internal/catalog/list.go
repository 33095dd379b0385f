package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/session"
)

// Listing is one listing of a server's tools: what go-sdk decoded from every tools/list
// page, the raw tool objects the transport captured (by name; the first of a name is kept),
// and what the pages said about caching it.
type Listing struct {
	Tools []*mcp.Tool
	Raw   map[string]json.RawMessage
	Info  session.ListInfo
}

// Limits bound one listing (the bridge's Options.MaxListTools and MaxListBytes, and its
// fixed cap on pages; rows in bridge/limits.go).
type Limits struct {
	MaxTools int
	MaxBytes int64
	MaxPages int
}

// errListBudget is wrapped by the error of a listing over MaxTools or MaxBytes.
var errListBudget = errors.New("tool listing over budget")

// List fetches every tools/list page on sess (a session of pool) and the raw tool objects
// the transport captured. A server that answers the first page "method not found" and
// declares no tools capability lists no tools. On an error the Listing holds only what the
// pages read so far said about caching.
func List(ctx context.Context, pool *session.Pool, sess *session.Session, lim Limits) (Listing, error) {
	var l Listing
	var captured []json.RawMessage
	budget := &budget{maxTools: lim.MaxTools, maxBytes: lim.MaxBytes}
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == lim.MaxPages {
			return Listing{Info: l.Info}, fmt.Errorf("more than %d pages of tools", lim.MaxPages)
		}
		res, err := sess.CS.ListTools(ctx, params)
		if err != nil {
			if page == 0 && isMethodNotFound(err) && sess.CS.InitializeResult().Capabilities.Tools == nil {
				return Listing{Info: l.Info}, nil // a server without tools
			}
			if ctx.Err() != nil {
				return Listing{Info: l.Info}, fmt.Errorf("page %d: %w", page+1, pool.StartErr(ctx, err, sess.Started))
			}
			return Listing{Info: l.Info}, fmt.Errorf("page %d: %w", page+1, session.OverrunErr(err, sess))
		}
		l.Info.Note(page, res.Cacheable)
		// go-sdk keeps this result in its list cache for the session's life (Release), and
		// the bridge reads nothing of its _meta (serverInfo on 2026-07-28): decoded, the
		// largest part of what stays (issue 37: about 10 KiB a server).
		res.Meta = nil
		pageRaw := sess.Conn.TakeTools()
		if err := budget.add(len(res.Tools), pageRaw); err != nil {
			return Listing{Info: l.Info}, fmt.Errorf("page %d: %w", page+1, err)
		}
		l.Tools = append(l.Tools, res.Tools...)
		captured = append(captured, pageRaw...)
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return Listing{Info: l.Info}, fmt.Errorf("page %d: the server repeated cursor %q", page+1, res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	l.Raw = map[string]json.RawMessage{}
	for _, r := range append(captured, sess.Conn.TakeTools()...) {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r, &head) == nil {
			if _, dup := l.Raw[head.Name]; !dup {
				l.Raw[head.Name] = r
			}
		}
	}
	return l, nil
}

func isMethodNotFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound
}

// budget counts one listing against Limits.MaxTools and MaxBytes.
type budget struct {
	maxTools int
	maxBytes int64
	tools    int
	bytes    int64
}

// add counts one page: its decoded tool count and the raw tool objects captured for it.
func (b *budget) add(tools int, raw []json.RawMessage) error {
	b.tools += tools
	for _, r := range raw {
		b.bytes += int64(len(r))
	}
	switch {
	case b.tools > b.maxTools:
		return fmt.Errorf("%w: more than %d tools (Options.MaxListTools)", errListBudget, b.maxTools)
	case b.bytes > b.maxBytes:
		return fmt.Errorf("%w: more than %d bytes of tool definitions (Options.MaxListBytes)", errListBudget, b.maxBytes)
	}
	return nil
}
