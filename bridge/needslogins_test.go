package bridge_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ttalk/mcpbridge/bridge"
)

// TestNeedsLogins fails when NeedsLogins misses a needed login anywhere in an error tree
// (wrapped, joined, joined inside a wrap), returns one twice, or returns anything else.
func TestNeedsLogins(t *testing.T) {
	a := &bridge.NeedsLoginError{Server: "notes", User: "ada", Reason: bridge.ReasonNoGrant}
	a2 := &bridge.NeedsLoginError{Server: "notes", User: "ada", Reason: bridge.ReasonGrantRefused}
	b := &bridge.NeedsLoginError{Server: "tracker", User: "ada", Reason: bridge.ReasonGrantRefused}
	c := &bridge.NeedsLoginError{Server: "notes", User: "grace", Reason: bridge.ReasonNoGrant}
	wrap := func(e error) error {
		return &bridge.ServerError{Server: e.(*bridge.NeedsLoginError).Server, Phase: bridge.PhaseList, Err: e}
	}
	other := errors.New("connection refused")
	for _, tc := range []struct {
		name string
		err  error
		want []*bridge.NeedsLoginError
	}{
		{"nil", nil, nil},
		{"no login", fmt.Errorf("listing: %w", other), nil},
		{"bare", a, []*bridge.NeedsLoginError{a}},
		{"in a ServerError", wrap(a), []*bridge.NeedsLoginError{a}},
		{"ToolsFor's join", errors.Join(wrap(a), &bridge.ServerError{Server: "x", Err: other}, wrap(b)), []*bridge.NeedsLoginError{a, b}},
		{"a join inside a wrap", fmt.Errorf("host: %w", errors.Join(other, fmt.Errorf("deep: %w", errors.Join(wrap(b), wrap(c))))), []*bridge.NeedsLoginError{b, c}},
		{"one per server and user", errors.Join(wrap(a), a2, wrap(c), a), []*bridge.NeedsLoginError{a, c}},
		{"two %w", fmt.Errorf("%w and %w", wrap(b), wrap(a)), []*bridge.NeedsLoginError{b, a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bridge.NeedsLogins(tc.err); !slices.Equal(got, tc.want) {
				t.Errorf("NeedsLogins = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestToolsForNeedsLogins: the joined error of ToolsFor for a user without grants for two
// per-user servers gives both logins, each with the reason ReasonNoGrant, and each login
// starts (AuthorizationURL).
func TestToolsForNeedsLogins(t *testing.T) {
	ctx := ctxT(t, 60*time.Second)
	var cfgs []bridge.ServerConfig
	for _, id := range []string{"notes", "tracker"} {
		as, _, _ := catalogueServer(t, stateless, "init", "private", 0)
		cfgs = append(cfgs, bridge.ServerConfig{ID: id, URL: as.URL(), Auth: &bridge.AuthConfig{Type: bridge.AuthOAuth}})
	}
	o := oauthOpts(&bridge.FileTokenStore{Path: filepath.Join(t.TempDir(), "tokens.json")}, nil)
	o.Users = &bridge.UserOptions{RedirectURL: "http://127.0.0.1:1/callback"}
	set, err := connectSet(t, cfgs, o)
	if err != nil || len(set.Failed()) > 0 {
		t.Fatalf("connect: %v %v", err, set.Failed())
	}
	_, err = set.ToolsFor(bridge.WithUser(ctx, "ada"))
	got := bridge.NeedsLogins(err)
	var servers []string
	for _, nle := range got {
		servers = append(servers, nle.Server)
		if nle.User != "ada" || nle.Reason != bridge.ReasonNoGrant {
			t.Errorf("%s: user %q, reason %q; want ada, %q", nle.Server, nle.User, nle.Reason, bridge.ReasonNoGrant)
		}
		if u, err := nle.AuthorizationURL(ctx); err != nil || u == "" {
			t.Errorf("%s: AuthorizationURL: %q, %v", nle.Server, u, err)
		}
	}
	if !slices.Equal(servers, []string{"notes", "tracker"}) {
		t.Fatalf("NeedsLogins(%v) names %v, want [notes tracker]", err, servers)
	}
}
