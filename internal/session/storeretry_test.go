package session

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/ttalk/mcpbridge/bridge/auth"
)

// masked is a masked copy of an error: it does not unwrap, Original gives the error.
type masked struct{ err error }

func (m masked) Error() string   { return "masked" }
func (m masked) Original() error { return m.err }

// A start-up error is the store's alone when every branch of it reaches ErrTokenStore,
// go-sdk's own wrapping aside; a timeout, a refusal or a needed login beside it is not.
func TestStoreOnly(t *testing.T) {
	store := fmt.Errorf("%w: reading the grant: %w", auth.ErrTokenStore, context.DeadlineExceeded)
	rejected := &jsonrpc.Error{Code: CodeRejected, Message: "rejected by transport"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"the sentinel", auth.ErrTokenStore, true},
		{"a store failure", store, true},
		{"wrapped", fmt.Errorf("initialize: %w", store), true},
		{"through go-sdk", fmt.Errorf("calling \"initialize\": %w", fmt.Errorf("sending: %w: %w", rejected, store)), true},
		{"masked", masked{fmt.Errorf("initialize: %w", store)}, true},
		{"twice", errors.Join(store, fmt.Errorf("again: %w", store)), true},
		{"go-sdk alone", fmt.Errorf("sending: %w", rejected), false},
		{"the server's own error", fmt.Errorf("%w: %w", &jsonrpc.Error{Code: -32603, Message: "boom"}, store), false},
		{"and a timeout", errors.Join(store, context.DeadlineExceeded), false},
		{"and a login", errors.Join(store, fmt.Errorf("%w: no grant", auth.ErrNeedsLogin)), false},
		{"a login", fmt.Errorf("%w: no grant", auth.ErrNeedsLogin), false},
		{"a refusal", errors.New("connection refused"), false},
	} {
		if got := StoreOnly(tc.err); got != tc.want {
			t.Errorf("%s: StoreOnly(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
