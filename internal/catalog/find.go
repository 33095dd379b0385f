package catalog

import (
	"fmt"

	"github.com/ttalk/mcpbridge/apps"
)

// Find is the MCP Apps lookup of a server among servers (bridge.Set.Lookup and the proxy):
// by id first (idOf), then by hash (hashOf). A hash two servers share is ambiguous
// (apps.ErrAmbiguousServer: look them up by ID); none found is apps.ErrUnknownServer.
func Find[S any](servers []S, id, hash string, idOf, hashOf func(S) string) (S, error) {
	var none S
	if id != "" {
		for _, s := range servers {
			if idOf(s) == id {
				return s, nil
			}
		}
	}
	if hash != "" {
		found, n := none, 0
		for _, s := range servers {
			if hashOf(s) != hash {
				continue
			}
			if n++; n == 2 {
				return none, fmt.Errorf("%w: hash %q is shared by servers %q and %q; use the server ID", apps.ErrAmbiguousServer, hash, idOf(found), idOf(s))
			}
			found = s
		}
		if n == 1 {
			return found, nil
		}
	}
	key := id
	if key == "" {
		key = hash
	}
	return none, fmt.Errorf("%w: %q", apps.ErrUnknownServer, key)
}
