package auth

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

// Outside a flow Start began, the engine knows no login: a callback is refused wrapping
// ErrLoginUnknown, naming the server, and the person's part of a flow says the user must
// log in.
func TestLoginsWithoutFlow(t *testing.T) {
	l := NewLogins(LoginSettings{Server: "tracker", Max: 1})
	err := l.Complete(context.Background(), "alice", url.Values{"state": {"s"}, "code": {"c"}})
	if !errors.Is(err, ErrLoginUnknown) || !strings.Contains(err.Error(), `"tracker"`) {
		t.Errorf("Complete = %v, want ErrLoginUnknown naming the server", err)
	}
	if l.Holds("s") || l.Relays() {
		t.Error("an engine without flows or relay holds or relays")
	}
	err = CompleteAny(context.Background(), "alice", url.Values{"state": {"s"}}, []*Logins{l}, func(string) error { return nil })
	if !errors.Is(err, ErrLoginUnknown) {
		t.Errorf("CompleteAny = %v, want ErrLoginUnknown", err)
	}
	_, err = l.Fetch(context.Background(), &sdkauth.AuthorizationArgs{URL: "https://as/authorize?state=s"})
	if !errors.Is(err, ErrNeedsLogin) {
		t.Errorf("Fetch outside a flow = %v, want ErrNeedsLogin", err)
	}
}

// A relayed callback carries only the fields a login uses, each bounded, and the relay
// knows the login by a hash of its state, never the state.
func TestRelayedQuery(t *testing.T) {
	long := strings.Repeat("x", maxCallbackValue+10)
	q := relayedQuery(url.Values{"code": {long}, "state": {"s"}, "other": {"y"}})
	if len(q) != 2 || len(q.Get("code")) != maxCallbackValue+1 || q.Get("state") != "s" {
		t.Errorf("relayedQuery = %v", q)
	}
	if id := loginID("s"); len(id) != 64 || id == loginID("t") {
		t.Errorf("loginID = %q", id)
	}
}
