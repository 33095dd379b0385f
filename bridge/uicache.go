package bridge

import (
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/apps"
)

type cachedResource struct {
	res     *mcp.ReadResourceResult
	expires time.Time
}

func (s *Server) cachedUI(uri string) *mcp.ReadResourceResult {
	if s.opts.UIResourceCacheTTL <= 0 || !strings.HasPrefix(uri, apps.URIScheme) {
		return nil
	}
	s.catMu.Lock()
	defer s.catMu.Unlock()
	c, ok := s.uiCache[uri]
	if !ok || time.Now().After(c.expires) {
		return nil
	}
	return c.res
}

func (s *Server) cacheUI(uri string, res *mcp.ReadResourceResult) {
	if s.opts.UIResourceCacheTTL <= 0 || !strings.HasPrefix(uri, apps.URIScheme) {
		return
	}
	now := time.Now()
	s.catMu.Lock()
	defer s.catMu.Unlock()
	if s.uiCache == nil {
		s.uiCache = map[string]cachedResource{}
	}
	if len(s.uiCache) >= maxUICache {
		for k, c := range s.uiCache {
			if now.After(c.expires) {
				delete(s.uiCache, k)
			}
		}
		if len(s.uiCache) >= maxUICache {
			return // full of live entries: serve uncached rather than evict at random
		}
	}
	s.uiCache[uri] = cachedResource{res: res, expires: now.Add(s.opts.UIResourceCacheTTL)}
}
