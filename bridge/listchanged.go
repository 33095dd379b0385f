package bridge

import (
	"context"
)

// ToolsChange reports that a server changed its tool list (notifications/tools/list_changed)
// and the bridge re-listed it, or joined a Set late (see Set). Added and Removed are the
// server's own tool names.
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

// relistSoon re-lists the server's tools in the background after a list_changed
// notification (catalog.Relister).
func relistSoon(s *Server) { s.relist.Soon(s.life, s.pool.Background, s.relistOnce) }

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
