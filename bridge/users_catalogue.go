package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/internal/catalog"
	"github.com/ttalk/mcpbridge/internal/session"
	"github.com/ttalk/mcpbridge/transport"
)

// Per-user catalogues. A per-user server's catalogue (Server.perUser, with Options.Users)
// is shared by every user when the listing the bridge made at Connect, with no user's
// credentials, was allowed and not marked private (cacheScope "public", or absent: the
// default). It is kept per user when that listing was refused for want of a user's grant
// (a tools/list that answers 401 without one) or came back with cacheScope "private": then
// the server offers no tool in the shared catalogue (Set.Tools), and each user's listing,
// made with the user's token, is cached in the user's state (bounded with it, see
// UserOptions.MaxSessions) for the ttlMs the server gave it; unless that listing is public
// (cacheScope "public" or absent): then it is every user's, listed once with the first
// user's grant (internal/session, Pool.UserCatalogue). Set.ToolsFor hands it out.

// listInfo is what a listing's pages said about caching it (SEP-2549; internal/session).
type listInfo = session.ListInfo

// sharedListing decides, after the shared session's listing (Server.list), whether the
// catalogue is shared: it returns the listing to install, or none when the catalogue is
// per user (from then on, for the server's life).
func (s *Server) sharedListing(listed []*mcp.Tool, raw map[string]json.RawMessage, li listInfo, err error) ([]*mcp.Tool, map[string]json.RawMessage, error) {
	if !s.pool.PrivateListing(err, errors.Is(err, ErrNeedsLogin), li) {
		return listed, raw, err
	}
	return nil, nil, nil
}

// usersOnly reports whether a server that could not be opened at Connect (serr) is kept
// for its users: a per-user server that refused to start without a user's grant. It then
// has no shared session and its catalogue is per user; each user's requests go on the
// user's own session.
func (s *Server) usersOnly(serr *ServerError) bool {
	if !s.perUser || s.opts.Users == nil || !errors.Is(serr, ErrNeedsLogin) {
		return false
	}
	s.pool.UsersOnly()
	s.catMu.Lock()
	s.status.Transport = string(transport.KindHTTP)
	s.hash = serverHash(s.cfg, transport.KindHTTP)
	s.catMu.Unlock()
	s.log.Info("the server opens only with a user's grant: sessions and catalogue are per user", "phase", serr.Phase)
	return true
}

// userCatalogue returns user id's listing of the server: the cached one when it is fresh
// (or, with stale, whatever its age), else a new one made with the user's token.
func (s *Server) userCatalogue(ctx context.Context, id string, stale bool) (*catalog.Converted, error) {
	c, err := s.pool.UserCatalogue(ctx, id, stale, func(ctx context.Context) (any, listInfo, error) {
		var (
			listed []*mcp.Tool
			raw    map[string]json.RawMessage
			li     listInfo
		)
		list := func(ctx context.Context, sess *session.Session) error {
			var err error
			listed, raw, li, err = s.listPages(ctx, sess)
			return err
		}
		var err error
		if s.pool.StatelessShared() {
			// A stateless server keeps no session for a user, and neither does the bridge.
			err = s.pool.ListOnce(ctx, id, list)
		} else {
			err = s.do(ctx, PhaseList, "tools/list", true, list)
		}
		if err != nil {
			return nil, li, err
		}
		var caps taskCaps
		if sess := s.pool.Current(); sess != nil {
			caps = sess.Caps // a user's session does not read them; the shared one did
		}
		l, problems := s.convert(ctx, caps, listed, raw)
		l.AppOnly = nil // a user's catalogue keeps its tools by name and the model's
		for _, p := range problems {
			s.log.Debug("tool problem in a user's listing", "user", fmt.Sprintf("%q", id), "tool", p.Tool, "problem", p.Problem)
		}
		return &l, li, nil
	})
	if err != nil {
		return nil, err
	}
	return c.(*catalog.Converted), nil
}

// listedTool is the tool a call of ctx resolves name to: on a server with per-user
// catalogues, the one in the user's catalogue (listed first if the user has none yet);
// else the shared catalogue's. The error wraps ErrUnknownTool or ErrToolGone, or says why
// the user's catalogue could not be had (a *NeedsLoginError for a user without a grant).
func (s *Server) listedTool(ctx context.Context, name string) (*catalog.Tool, error) {
	if !s.pool.PrivateCatalogues() {
		return s.remoteTool(name)
	}
	user, ok := UserFromContext(ctx)
	if !ok {
		return nil, fmt.Errorf("tool %q: %w", name, errNoUser)
	}
	if err := ValidateUserID(user); err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	c, err := s.userCatalogue(ctx, user, true)
	if err != nil {
		var se *ServerError
		if errors.As(err, &se) {
			err = se.Err
		}
		return nil, fmt.Errorf("tool %q: listing user %q's tools: %w", name, user, err)
	}
	rt := c.Remote[name]
	if rt == nil {
		return nil, fmt.Errorf("tool %q: %w (not in user %q's catalogue)", name, ErrUnknownTool, user)
	}
	return rt, nil
}

// errNoUser is the error of a call without a user (WithUser) on a server whose grants are
// per user.
var errNoUser = session.ErrNoUser

// ToolsFor returns the tools of the user ctx names (WithUser): the shared catalogue
// (Tools) followed by, for each server whose catalogue is per user, in config order, the
// tools that server listed for this user, named as Connect names tools (unique within the
// result; the shared tools keep their names). A user's listing is made with the user's
// token and cached for the ttlMs the server gave it. A server the user cannot list (no
// grant: a *NeedsLoginError; or another failure) is left out and its error is in the
// returned error, joined with the others; the tools returned are usable whatever the
// error. The error wraps ErrInvalidUser, with no tools, when ctx names no valid user.
//
// The Handler of a per-user tool calls with the user of its ctx, and refuses (wrapping
// ErrUnknownTool) a user whose own catalogue has no such tool.
func (set *Set) ToolsFor(ctx context.Context) (Tools, error) {
	user, ok := UserFromContext(ctx)
	if !ok {
		return nil, fmt.Errorf("%w: no user in the context (bridge.WithUser)", ErrInvalidUser)
	}
	if err := ValidateUserID(user); err != nil {
		return nil, err
	}
	tools := set.Tools()
	var n *catalog.Namer
	var errs []error
	for _, s := range set.Servers() {
		if !s.pool.PrivateCatalogues() {
			continue
		}
		c, err := s.userCatalogue(ctx, user, false)
		if err != nil {
			var se *ServerError
			if !errors.As(err, &se) {
				err = &ServerError{Server: s.cfg.ID, Phase: PhaseList, Err: fmt.Errorf("user %q: %w", user, err)}
			}
			errs = append(errs, err)
			continue
		}
		if n == nil {
			n = catalog.NewNamer()
			for _, t := range tools {
				n.Take(t.Name)
			}
		}
		tools = append(tools, s.userTools(n, c)...)
	}
	return tools, errors.Join(errs...)
}

// userTools names the model-visible tools of catalogue c with n.
func (s *Server) userTools(n *catalog.Namer, c *catalog.Converted) []Tool {
	prefix := s.cfg.Prefix
	if prefix == "" && s.opts.AlwaysPrefix {
		prefix = s.cfg.ID
	}
	tools := make([]Tool, 0, len(c.Model))
	for _, remote := range c.Model {
		name, _ := n.Assign(s.cfg.ID, prefix, remote)
		tools = append(tools, s.tool(name, c.Remote[remote]))
	}
	return tools
}
