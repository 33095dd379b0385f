package bridge

import (
	"context"
	"sync"
)

// ToolsChange reports that a server changed its tool list (notifications/tools/list_changed)
// and the bridge re-listed it. Added and Removed are the server's own tool names.
//
// The model-visible Tools from Connect stay as they were: removed tools now fail with a
// clear error, changed tools are validated against their new schemas, and added tools are
// callable through Server.CallTool and the App proxy but only reach the model after the host
// connects again. A host that wants the new list can do that from OnToolsChanged.
type ToolsChange struct {
	Server  string
	Added   []string
	Removed []string
}

// relistState coalesces list_changed notifications: one re-list at a time, and one more
// after it when notifications arrived meanwhile.
type relistState struct {
	mu      sync.Mutex
	running bool
	again   bool
}

// soon runs once (a re-listing) in the background with bg after a list_changed
// notification: one at a time, and one more after it when notifications arrived meanwhile;
// none once life ended.
func (r *relistState) soon(life context.Context, bg func(func()), once func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if life.Err() != nil {
		return
	}
	if r.running {
		r.again = true
		return
	}
	r.running = true
	bg(func() {
		for {
			once()
			r.mu.Lock()
			if !r.again || life.Err() != nil {
				r.running = false
				r.mu.Unlock()
				return
			}
			r.again = false
			r.mu.Unlock()
		}
	})
}

// relistSoon re-lists the server's tools in the background after a list_changed
// notification (relistState.soon).
func relistSoon(s *Server) { s.relist.soon(s.life, s.pool.Background, s.relistOnce) }

func (s *Server) relistOnce() {
	sess := s.pool.Current()
	if sess == nil {
		return // a redial will list afresh
	}
	ctx, cancel := context.WithTimeout(s.life, s.opts.connectTimeout(s.cfg))
	defer cancel()
	listed, raw, err := s.list(ctx, sess)
	if err != nil {
		if s.life.Err() == nil {
			s.log.Warn("re-listing tools after list_changed failed", "err", err)
		}
		return
	}
	added, removed, ok := s.apply(ctx, sess, sess, listed, raw)
	if !ok || (len(added) == 0 && len(removed) == 0) {
		return
	}
	s.log.Info("server changed its tools", "added", added, "removed", removed)
	if fn := s.opts.OnToolsChanged; fn != nil {
		change := ToolsChange{Server: s.cfg.ID, Added: added, Removed: removed}
		s.notify.Post(func() { fn(s.life, change) })
	}
}
