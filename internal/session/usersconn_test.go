package session

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ttalk/mcpbridge/transport"
)

// TestUsersConnClosedAtOpenersLogout: the users' connection of a server with no shared
// session was opened with one user's grant; that user's logout (Forget) closes it, so the
// grant given up is no longer used, and the next user's request opens another with their
// own. Another user's logout leaves it.
func TestUsersConnClosedAtOpenersLogout(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "conn", Version: "1"}, nil)
	p := testPool(t, srv)
	p.UsersOnly()
	opened := map[string]int{}
	p.dialUser = func(ctx context.Context, u *userState) (*Session, error) {
		opened[u.id]++ // acquire runs one open at a time here
		sess, _, f := p.openAttempt(ctx, transport.KindInProcess, "", &negotiation{wait: time.Second})
		if f != nil {
			return nil, f.err
		}
		return sess, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := func(id string) *Session {
		t.Helper()
		p.users.mu.Lock()
		u := p.user(id)
		p.users.mu.Unlock()
		sess, err := p.usersConn(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return sess
	}
	first := conn("alice")
	if again := conn("bob"); again != first {
		t.Fatal("bob's request opened a second users' connection")
	}
	p.Forget("bob")
	if again := conn("bob"); again != first {
		t.Fatal("bob's logout closed the connection alice's grant opened")
	}
	p.Forget("alice")
	select {
	case <-first.Dead():
	case <-ctx.Done():
		t.Fatal("alice's logout left the connection her grant opened")
	}
	if next := conn("bob"); next == first {
		t.Fatal("after alice's logout, bob's request still got her connection")
	}
	if opened["alice"] != 1 || opened["bob"] != 1 {
		t.Fatalf("opens %v, want one with alice's grant, then one with bob's", opened)
	}
}

// TestUsersConnDrainedAtOpenersLogout: a call of another user's in flight on the users'
// connection when its opener logs out runs to its end; the connection closes after it.
func TestUsersConnDrainedAtOpenersLogout(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "conn", Version: "1"}, nil)
	p := testPool(t, srv)
	p.UsersOnly()
	p.dialUser = func(ctx context.Context, u *userState) (*Session, error) {
		sess, _, f := p.openAttempt(ctx, transport.KindInProcess, "", &negotiation{wait: time.Second})
		if f != nil {
			return nil, f.err
		}
		return sess, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.users.mu.Lock()
	alice := p.user("alice")
	p.users.mu.Unlock()
	first, err := p.usersConn(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if !p.holdConn(first) { // bob's call starts on it
		t.Fatal("the current users' connection was not handed out")
	}
	p.Forget("alice")
	if p.holdConn(first) {
		t.Fatal("a retired users' connection was handed out to a new call")
	}
	if err := first.CS.Ping(ctx, nil); err != nil {
		t.Fatalf("bob's call in flight lost its connection at alice's logout: %v", err)
	}
	p.releaseConn(first) // bob's call ends
	select {
	case <-first.Dead():
	case <-ctx.Done():
		t.Fatal("the retired connection stayed open after its last call")
	}
}
