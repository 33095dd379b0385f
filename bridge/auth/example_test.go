package auth_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ttalk/mcpbridge/bridge/auth"
)

// A client credentials config is checked before a handler is made; an empty token file
// holds no grant.
func Example() {
	_, err := auth.Prepare(auth.AuthConfig{Type: auth.AuthClientCredentials})
	fmt.Println(err)
	_, err = auth.Prepare(auth.AuthConfig{Type: auth.AuthClientCredentials, ClientID: "bot", ClientSecret: "s3cret"})
	fmt.Println(err)

	dir, _ := os.MkdirTemp("", "oauth-example")
	defer os.RemoveAll(dir)
	store := &auth.FileTokenStore{Path: filepath.Join(dir, "tokens.json")}
	tok, err := store.LoadToken(context.Background(), "any")
	fmt.Println(tok == nil, err)
	// Output:
	// auth: client_credentials needs client_id
	// <nil>
	// true <nil>
}
