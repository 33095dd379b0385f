package bridge_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
	"github.com/ttalk/mcpbridge/internal/slack"
)

// callConcurrently makes n concurrent calls of tool and fails the test on any error; a call
// that never returns fails it after slack.Limit (a deadlock, not a slow machine).
func callConcurrently(t *testing.T, tool bridge.Tool, args string, n int) {
	t.Helper()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := tool.Handler(ctxT(t, 2*time.Minute), []byte(args))
			errs <- err
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(slack.Limit(0)):
		t.Fatal("concurrent calls did not return")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
}

// Concurrent 401s share one authorization: after the authorization server forgot every
// access token, 16 concurrent calls get one new token (client credentials: one grant; the
// authorization code flow: one refresh), and all of them succeed with it.
func TestConcurrent401sShareOneAuthorization(t *testing.T) {
	t.Run("client credentials", func(t *testing.T) {
		as := newAuthServer(t)
		as.AddClient("svc", "cc-secret")
		opts := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}, nil)
		set, err := connectSet(t, []bridge.ServerConfig{{ID: "billing", URL: as.URL(),
			Auth: &bridge.AuthConfig{Type: bridge.AuthClientCredentials, ClientID: "svc", ClientSecret: "cc-secret"}}}, opts)
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("%v %v", err, set.Failed())
		}
		before := as.Count("client_credentials")
		as.ExpireAll()
		callConcurrently(t, byName(t, set.Tools(), "echo"), `{"z":"hi"}`, 16)
		if n := as.Count("client_credentials") - before; n != 1 {
			t.Errorf("%d grants for 16 concurrent 401s, want 1", n)
		}
	})
	t.Run("authorization code", func(t *testing.T) {
		as := newAuthServer(t)
		store := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}
		cfg := bridge.ServerConfig{ID: "tracker", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}
		set, err := connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(store, browserAuthorizer()))
		if err != nil || len(set.Failed()) > 0 {
			t.Fatalf("%v %v", err, set.Failed())
		}
		before, codes := as.Count("refresh_token"), as.Count("authorization_code")
		as.ExpireAll()
		callConcurrently(t, byName(t, set.Tools(), "echo"), `{"z":"hi"}`, 16)
		if n := as.Count("refresh_token") - before; n != 1 || as.Count("authorization_code") != codes {
			t.Errorf("%d refreshes and %d new logins for 16 concurrent 401s, want 1 and 0", n, as.Count("authorization_code")-codes)
		}
	})
}

// blockingStore is a TokenStore whose SaveToken blocks until release is closed (a secret
// store that hangs), telling saving when it started.
type blockingStore struct {
	bridge.TokenStore
	saving  chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *blockingStore) SaveToken(ctx context.Context, key string, t *bridge.StoredToken) error {
	s.once.Do(func() { close(s.saving) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.TokenStore.SaveToken(ctx, key, t)
}

// A token store that hangs while saving a refreshed token never holds up a call: the save
// runs on its own, and Close waits for it (bounded), so the refresh is kept.
func TestHangingTokenStoreBlocksNoCall(t *testing.T) {
	as := newAuthServer(t)
	file := &bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "t.json")}
	cfg := bridge.ServerConfig{ID: "tracker", URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}}
	set, err := connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(file, browserAuthorizer()))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("login: %v %v", err, set.Failed())
	}
	_ = set.Close()

	store := &blockingStore{TokenStore: file, saving: make(chan struct{}), release: make(chan struct{})}
	set, err = bridge.Connect(ctxT(t, 2*time.Minute), []bridge.ServerConfig{cfg}, oauthOpts(store, nil))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("%v %v", err, set.Failed())
	}
	as.ExpireAll() // the next call refreshes, and its save hangs
	callConcurrently(t, byName(t, set.Tools(), "echo"), `{"z":"hi"}`, 4)
	select {
	case <-store.saving:
	default:
		t.Fatal("the refreshed token was not being saved")
	}
	close(store.release)
	_ = set.Close()

	// The refreshed token was kept: a new Connect uses it without refreshing again.
	refreshes := as.Count("refresh_token")
	set, err = connectSet(t, []bridge.ServerConfig{cfg}, oauthOpts(file, nil))
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("after the save: %v %v", err, set.Failed())
	}
	callConcurrently(t, byName(t, set.Tools(), "echo"), `{"z":"hi"}`, 1)
	if n := as.Count("refresh_token") - refreshes; n != 0 {
		t.Errorf("%d refreshes after Close, want 0: the refreshed token was not saved", n)
	}
}
