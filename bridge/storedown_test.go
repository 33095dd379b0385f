package bridge_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// A server whose stored grant the token store cannot read at Connect (a store of any kind
// failing at once: here "connection refused") is skipped with a store error, not a needed
// login, and rejoins the Set once the store answers again.
func TestStoreReadFailureAtConnectRejoins(t *testing.T) {
	as := newAuthServer(t)
	store := &downStore{FileTokenStore: bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}}
	cfgs := []bridge.ServerConfig{{ID: "svc", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}}
	first, err := connectSet(t, cfgs, oauthOpts(store, browserAuthorizer())) // logs in once
	if err != nil || len(first.Failed()) > 0 {
		t.Fatalf("connect with a login: %v %v", err, first.Failed())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	store.down.Store(true)
	set, err := connectSet(t, cfgs, oauthOpts(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	if f := set.Failed(); len(f) != 1 || !errors.Is(f[0], bridge.ErrTokenStore) || errors.Is(f[0], bridge.ErrNeedsLogin) {
		t.Fatalf("failed while the store is down: %v (want one store error)", f)
	}
	store.down.Store(false)
	if !waitFor(30*time.Second, func() bool { return len(set.Servers()) == 1 && len(set.Failed()) == 0 }) {
		t.Fatalf("the server did not rejoin once the store answered: failed %v", set.Failed())
	}
	if len(set.Tools()) == 0 {
		t.Fatal("no tools after the rejoin")
	}
}
