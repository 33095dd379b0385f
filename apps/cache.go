package apps

import (
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceCache keeps the ui:// resources read from one server for a while, so that an
// App's HTML is not fetched again on every render (bridge.Options.UIResourceCacheTTL). A
// nil *ResourceCache caches nothing. It is not safe for concurrent use: its owner guards it.
type ResourceCache struct {
	ttl     time.Duration
	max     int
	entries map[string]cachedResource
}

type cachedResource struct {
	res     *mcp.ReadResourceResult
	expires time.Time
}

// NewResourceCache returns a cache keeping each ui:// resource for ttl and at most max of
// them, or nil (no caching) when ttl <= 0.
func NewResourceCache(ttl time.Duration, max int) *ResourceCache {
	if ttl <= 0 {
		return nil
	}
	return &ResourceCache{ttl: ttl, max: max}
}

// Get returns the cached result for uri, or nil when it is not a ui:// URI, not cached or
// expired. Callers must not modify a returned result.
func (c *ResourceCache) Get(uri string) *mcp.ReadResourceResult {
	if c == nil || !strings.HasPrefix(uri, URIScheme) {
		return nil
	}
	e, ok := c.entries[uri]
	if !ok || time.Now().After(e.expires) {
		return nil
	}
	return e.res
}

// Put caches res for uri when it is a ui:// URI. A cache full of live entries takes no more
// (it serves uncached rather than evict at random); expired ones are dropped first.
func (c *ResourceCache) Put(uri string, res *mcp.ReadResourceResult) {
	if c == nil || !strings.HasPrefix(uri, URIScheme) {
		return
	}
	now := time.Now()
	if c.entries == nil {
		c.entries = map[string]cachedResource{}
	}
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			return // full of live entries: serve uncached rather than evict at random
		}
	}
	c.entries[uri] = cachedResource{res: res, expires: now.Add(c.ttl)}
}

// Clear empties the cache (the session was redialled: its resources may have changed).
func (c *ResourceCache) Clear() {
	if c != nil {
		clear(c.entries)
	}
}
