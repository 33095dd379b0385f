package catalog

import (
	"errors"
	"testing"

	"github.com/ttalk/mcpbridge/apps"
)

// Find looks a server up by ID first, then by hash; a hash two servers share is ambiguous.
func TestFind(t *testing.T) {
	type srv struct{ id, hash string }
	servers := []srv{{"a", "h1"}, {"b", "h2"}, {"c", "h2"}, {"h1", "h3"}}
	idOf := func(s srv) string { return s.id }
	hashOf := func(s srv) string { return s.hash }
	for _, tc := range []struct {
		id, hash string
		want     string // the ID found; "" when none
		err      error
		text     string
	}{
		{id: "b", hash: "b", want: "b"},
		{id: "h1", hash: "h1", want: "h1"}, // an ID wins over a hash
		{hash: "h1", want: "a"},
		{id: "x", hash: "h3", want: "h1"},
		{id: "h2", hash: "h2", err: apps.ErrAmbiguousServer, text: `hash "h2" is shared by servers "b" and "c"; use the server ID`},
		{id: "x", hash: "x", err: apps.ErrUnknownServer, text: `"x"`},
		{hash: "y", err: apps.ErrUnknownServer, text: `"y"`},
	} {
		s, err := Find(servers, tc.id, tc.hash, idOf, hashOf)
		if s.id != tc.want || !errors.Is(err, tc.err) || (tc.err != nil && err.Error() != tc.err.Error()+": "+tc.text) {
			t.Errorf("Find(%q, %q) = %q, %v; want %q, %v %s", tc.id, tc.hash, s.id, err, tc.want, tc.err, tc.text)
		}
	}
}
